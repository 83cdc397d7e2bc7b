package dev.depot.bench;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectView;
import dev.depot.client.ObjectWriter;
import dev.depot.errors.StoreFullException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.DoubleBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntConsumer;

/**
 * A producer JVM makes float64 arrays of {@code size} bytes and a consumer JVM sums them, handed over either
 * through a Depot store or serialized over a TCP loopback socket. Each object starts with an 8-byte header, the
 * producer's {@code System.nanoTime()} taken when the array is filled and the hand-off starts; the consumer
 * takes its own when the array is usable (Depot: the get returned; TCP: received and deserialized). That
 * difference is the hand-off; Depot's also counts the producer's create.
 *
 * <p>Two phases: lock-step (the producer waits for the consumer's acknowledgement before the next object, so
 * hand-off times hold no queueing; the first {@code warm} objects are not counted), then free-running for
 * throughput. The consumer checks every sum. Used by {@link PipelineBench} and {@link DemoMain}.
 */
final class Pipeline {
    static final String PRODUCER_ROLE = "pipe-producer";
    static final String CONSUMER_ROLE = "pipe-consumer";
    static final String TCP_PRODUCER_ROLE = "tcp-producer";
    static final String TCP_CONSUMER_ROLE = "tcp-consumer";
    private static final long TIMEOUT_MILLIS = 60_000;

    /** How many objects of which size go through each phase. */
    record Plan(long size, int warm, int lockstep, int free) {
        int total() {
            return warm + lockstep + free;
        }

        String[] args() {
            return new String[] {Long.toString(size), Integer.toString(warm), Integer.toString(lockstep),
                Integer.toString(free)};
        }

        static Plan parse(String[] a, int from) {
            return new Plan(Long.parseLong(a[from]), Integer.parseInt(a[from + 1]), Integer.parseInt(a[from + 2]),
                Integer.parseInt(a[from + 3]));
        }

        long doubles() {
            return size / Double.BYTES - 1;
        }
    }

    /** The figures of one mechanism: hand-off times in ns, throughput of the free-running phase. */
    record Stats(double handoffP50, double handoffP99, double objectsPerSecond, double gibPerSecond,
                 double createP50) {
    }

    private Pipeline() {
    }

    /** Runs producer and consumer through the store in {@code dir}; {@code progress} gets objects consumed. */
    static Stats viaDepot(Path dir, Plan plan, IntConsumer progress) {
        String[] args = concat(dir.toString(), plan.args());
        try (Child consumer = Child.start(CONSUMER_ROLE, 128, args);
             Child producer = Child.start(PRODUCER_ROLE, 128, args)) {
            Stats s = drive(producer, consumer, plan, progress);
            double create = ChildIo.summary(ChildIo.fields(producer.awaitLine("RESULT", 60)).get("create"))[1];
            producer.awaitExit(30);
            consumer.awaitExit(30);
            return new Stats(s.handoffP50 + create, s.handoffP99 + create, s.objectsPerSecond, s.gibPerSecond,
                create);
        }
    }

    /** The baseline: the same over TCP loopback, serialized into a buffer and deserialized into a double[]. */
    static Stats viaTcp(Plan plan, IntConsumer progress) {
        int heap = (int) (3 * plan.size / Units.MIB + 128);
        try (Child consumer = Child.start(TCP_CONSUMER_ROLE, heap, plan.args())) {
            String port = ChildIo.fields(consumer.awaitLine("PORT", 60)).get("port");
            try (Child producer = Child.start(TCP_PRODUCER_ROLE, heap, concat(port, plan.args()))) {
                Stats s = drive(producer, consumer, plan, progress);
                producer.awaitLine("RESULT", 60);
                producer.awaitExit(30);
                consumer.awaitExit(30);
                return s;
            }
        }
    }

    private static Stats drive(Child producer, Child consumer, Plan plan, IntConsumer progress) {
        int consumed = 0;
        while (true) {
            String line = consumer.nextLine(120);
            if (line.startsWith("GOT")) {
                progress.accept(++consumed);
            } else if (line.startsWith("READY")) {
                producer.awaitLine("READY", 120);
                consumer.send("GO");
                producer.send("GO");
            } else if (line.startsWith("RESULT")) {
                Map<String, String> r = ChildIo.fields(line);
                double[] h = ChildIo.summary(r.get("handoff"));
                double seconds = Long.parseLong(r.get("nanos")) / 1e9;
                return new Stats(h[1], h[2], plan.free / seconds, plan.free * plan.size / (double) Units.GIB / seconds,
                    0);
            }
        }
    }

    private static String[] concat(String first, String[] rest) {
        String[] a = new String[rest.length + 1];
        a[0] = first;
        System.arraycopy(rest, 0, a, 1, rest.length);
        return a;
    }

    static void child(String role, String[] args, ChildIo io) throws IOException {
        switch (role) {
            case PRODUCER_ROLE -> depotProducer(Path.of(args[0]), Plan.parse(args, 1), io);
            case CONSUMER_ROLE -> depotConsumer(Path.of(args[0]), Plan.parse(args, 1), io);
            case TCP_PRODUCER_ROLE -> tcpProducer(Integer.parseInt(args[0]), Plan.parse(args, 1), io);
            default -> tcpConsumer(Plan.parse(args, 0), io);
        }
    }

    private static ObjectId dataId(String phase, int i) {
        return ObjectId.of("depot-bench/pipeline/" + phase + "/" + i);
    }

    private static ObjectId ackId(int i) {
        return ObjectId.of("depot-bench/pipeline/ack/" + i);
    }

    private static void depotProducer(Path dir, Plan plan, ChildIo io) {
        LatencyHistogram create = new LatencyHistogram();
        try (DepotClient client = DepotClient.open(dir)) {
            int lock = plan.warm + plan.lockstep;
            for (int i = 0; i < lock + plan.free; i++) {
                if (i == lock) {
                    io.say("READY");
                    io.expect("GO");
                }
                long t0 = System.nanoTime();
                try (ObjectWriter w = createWhenRoom(client, dataId(i < lock ? "l" : "f", i), plan.size)) {
                    if (i >= plan.warm && i < lock) {
                        create.record(System.nanoTime() - t0);
                    }
                    MemorySegment d = w.data();
                    MemorySegment body = d.asSlice(Long.BYTES);
                    int n = (int) plan.doubles();
                    for (int j = 0; j < n; j++) {
                        body.setAtIndex(ValueLayout.JAVA_DOUBLE, j, j);
                    }
                    d.set(ValueLayout.JAVA_LONG, 0, System.nanoTime());
                    w.seal();
                }
                if (i < lock) {
                    client.get(ackId(i), TIMEOUT_MILLIS).close();
                    client.delete(ackId(i));
                }
            }
        }
        io.say("RESULT create=" + create.summary());
    }

    /** Creates without evicting: objects not yet consumed must stay; waits while the store is full. */
    private static ObjectWriter createWhenRoom(DepotClient client, ObjectId id, long size) {
        long deadline = System.nanoTime() + TIMEOUT_MILLIS * 1_000_000L;
        while (true) {
            try {
                return client.create(id, size, new byte[0], DepotClient.CreateOption.NO_EVICT);
            } catch (StoreFullException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                LockSupport.parkNanos(100_000);
            }
        }
    }

    private static void depotConsumer(Path dir, Plan plan, ChildIo io) {
        LatencyHistogram handoff = new LatencyHistogram();
        long start = 0;
        try (DepotClient client = DepotClient.open(dir)) {
            int lock = plan.warm + plan.lockstep;
            for (int i = 0; i < lock + plan.free; i++) {
                if (i == lock) {
                    io.say("READY");
                    io.expect("GO");
                    start = System.nanoTime();
                }
                ObjectId id = dataId(i < lock ? "l" : "f", i);
                try (ObjectView v = client.get(id, TIMEOUT_MILLIS)) {
                    long now = System.nanoTime();
                    MemorySegment d = v.data();
                    if (i >= plan.warm && i < lock) {
                        handoff.record(now - d.get(ValueLayout.JAVA_LONG, 0));
                    }
                    MemorySegment body = d.asSlice(Long.BYTES);
                    int n = (int) plan.doubles();
                    double sum = 0;
                    for (int j = 0; j < n; j++) {
                        sum += body.getAtIndex(ValueLayout.JAVA_DOUBLE, j);
                    }
                    check(sum, plan, i);
                }
                client.delete(id);
                if (i < lock) {
                    client.put(ackId(i), new byte[8]);
                }
                io.say("GOT " + i);
            }
        }
        io.say("RESULT handoff=" + handoff.summary() + " nanos=" + (System.nanoTime() - start));
    }

    private static void check(double sum, Plan plan, int i) {
        double n = plan.doubles();
        if (sum != n * (n - 1) / 2) {
            throw new IllegalStateException("object " + i + " sums to " + sum + ", expected " + n * (n - 1) / 2);
        }
    }

    private static void tcpProducer(int port, Plan plan, ChildIo io) throws IOException {
        try (SocketChannel c = SocketChannel.open(new InetSocketAddress(InetAddress.getLoopbackAddress(), port))) {
            c.setOption(StandardSocketOptions.TCP_NODELAY, true);
            double[] array = new double[(int) plan.doubles()];
            ByteBuffer message = ByteBuffer.allocateDirect((int) plan.size).order(ByteOrder.nativeOrder());
            DoubleBuffer body = message.slice(Long.BYTES, message.capacity() - Long.BYTES)
                .order(ByteOrder.nativeOrder()).asDoubleBuffer();
            ByteBuffer ack = ByteBuffer.allocate(1);
            int lock = plan.warm + plan.lockstep;
            for (int i = 0; i < lock + plan.free; i++) {
                if (i == lock) {
                    io.say("READY");
                    io.expect("GO");
                }
                for (int j = 0; j < array.length; j++) {
                    array[j] = j;
                }
                message.clear();
                message.putLong(0, System.nanoTime());
                body.clear();
                body.put(array);
                UnixSockets.writeFully(c, message);
                if (i < lock) {
                    ack.clear();
                    UnixSockets.readFully(c, ack);
                }
            }
        }
        io.say("RESULT");
    }

    private static void tcpConsumer(Plan plan, ChildIo io) throws IOException {
        LatencyHistogram handoff = new LatencyHistogram();
        long start = 0;
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            io.say("PORT port=" + ((InetSocketAddress) server.getLocalAddress()).getPort());
            try (SocketChannel c = server.accept()) {
                c.setOption(StandardSocketOptions.TCP_NODELAY, true);
                double[] array = new double[(int) plan.doubles()];
                ByteBuffer message = ByteBuffer.allocateDirect((int) plan.size).order(ByteOrder.nativeOrder());
                DoubleBuffer body = message.slice(Long.BYTES, message.capacity() - Long.BYTES)
                    .order(ByteOrder.nativeOrder()).asDoubleBuffer();
                ByteBuffer ack = ByteBuffer.allocate(1);
                int lock = plan.warm + plan.lockstep;
                for (int i = 0; i < lock + plan.free; i++) {
                    if (i == lock) {
                        io.say("READY");
                        io.expect("GO");
                        start = System.nanoTime();
                    }
                    message.clear();
                    UnixSockets.readFully(c, message);
                    body.clear();
                    body.get(array);
                    long now = System.nanoTime();
                    if (i >= plan.warm && i < lock) {
                        handoff.record(now - message.getLong(0));
                    }
                    double sum = 0;
                    for (double v : array) {
                        sum += v;
                    }
                    check(sum, plan, i);
                    if (i < lock) {
                        ack.clear();
                        UnixSockets.writeFully(c, ack);
                    }
                    io.say("GOT " + i);
                }
            }
        }
        io.say("RESULT handoff=" + handoff.summary() + " nanos=" + (System.nanoTime() - start));
    }
}
