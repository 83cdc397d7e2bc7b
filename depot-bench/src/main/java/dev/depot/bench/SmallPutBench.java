package dev.depot.bench;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * Client processes create, fill, seal (and, 64 puts later, delete) 1 KiB objects as fast as they can; objects/s
 * per client with one and with two clients. Baseline: the same processes stream 1 KiB messages over a UNIX
 * domain socket to a reader in the driver.
 */
final class SmallPutBench implements Benchmark {
    static final String ROLE = "small-put";
    static final String SOCKET_ROLE = "small-put-socket";
    static final int OBJECT_SIZE = 1024;
    private static final int RING = 256;
    private static final int LIVE = 64;
    private static final double TARGET_PER_CLIENT = 500_000;
    /** Each child's ids carry a tag of their own, so no run meets another's objects in the store. */
    private static final AtomicInteger TAGS = new AtomicInteger();

    @Override
    public String name() {
        return "small-put";
    }

    @Override
    public String description() {
        return "create+write+seal(+delete) of 1 KiB objects by 1 and 2 client processes vs 1 KiB messages over a UNIX socket";
    }

    @Override
    public void run(boolean quick, Consumer<Result> out) throws Exception {
        long runMillis = quick ? 500 : 2000;
        long warmMillis = quick ? 300 : 1000;
        int rounds = quick ? 1 : 3;
        try (BenchStore store = BenchStore.start(64 * Units.MIB);
             UnixSockets drain = UnixSockets.serve(store.dir().resolve("drain.sock"), UnixSockets.Mode.DRAIN)) {
            for (int clients = 1; clients <= 2; clients++) {
                // Best of a few alternating rounds: other load on the machine hits both sides alike.
                double depot = 0;
                double socket = 0;
                for (int r = 0; r < rounds; r++) {
                    depot = Math.max(depot, measure(clients, ROLE, store.dir().toString(), warmMillis, runMillis));
                    socket = Math.max(socket, measure(clients, SOCKET_ROLE, drain.path().toString(), warmMillis,
                        runMillis));
                }
                Map<String, Object> figures = new LinkedHashMap<>();
                figures.put("clients", clients);
                figures.put("objects_per_s_per_client", depot);
                figures.put("objects_per_s_total", depot * clients);
                Map<String, Object> baseline = new LinkedHashMap<>();
                baseline.put("kind", "1 KiB messages streamed over a UNIX domain socket");
                baseline.put("objects_per_s_per_client", socket);
                baseline.put("objects_per_s_total", socket * clients);
                out.accept(new Result(name(), clients + (clients == 1 ? " client" : " clients"), figures, baseline,
                    depot / socket, ">= 500k objects/s per client", depot >= TARGET_PER_CLIENT));
            }
        }
    }

    /** Runs {@code clients} children of {@code role} at once; returns the mean objects/s per client. */
    private static double measure(int clients, String role, String target, long warmMillis, long runMillis) {
        List<Child> children = new ArrayList<>();
        try {
            for (int i = 0; i < clients; i++) {
                children.add(Child.start(role, 128, target, Integer.toString(TAGS.getAndIncrement()),
                    Long.toString(warmMillis),
                    Long.toString(runMillis)));
            }
            for (Child c : children) {
                c.awaitLine("READY", 60);
            }
            for (Child c : children) {
                c.send("GO");
            }
            double sum = 0;
            for (Child c : children) {
                Map<String, String> r = ChildIo.fields(c.awaitLine("RESULT", 60 + runMillis / 1000));
                sum += Long.parseLong(r.get("ops")) / (Long.parseLong(r.get("nanos")) / 1e9);
                c.awaitExit(30);
            }
            return sum / clients;
        } finally {
            Child.closeAll(children);
        }
    }

    /** Child: {@code TARGET INDEX WARM_MILLIS RUN_MILLIS}; TARGET is the store dir or the socket path. */
    static void child(String role, String[] args, ChildIo io) throws Exception {
        Path target = Path.of(args[0]);
        int index = Integer.parseInt(args[1]);
        long warmNanos = Long.parseLong(args[2]) * 1_000_000L;
        long runNanos = Long.parseLong(args[3]) * 1_000_000L;
        long[] result;
        if (role.equals(ROLE)) {
            try (DepotClient client = DepotClient.open(target); Arena arena = Arena.ofConfined()) {
                ObjectId[] ids = new ObjectId[RING];
                for (int k = 0; k < RING; k++) {
                    ids[k] = ObjectId.of("depot-bench/small-put/" + index + "/" + k);
                }
                MemorySegment payload = arena.allocate(OBJECT_SIZE);
                payload.fill((byte) 42);
                long[] counter = {0};
                putsFor(client, ids, payload, counter, warmNanos);
                io.say("READY");
                io.expect("GO");
                result = putsFor(client, ids, payload, counter, runNanos);
            }
        } else {
            try (SocketChannel c = UnixSockets.connect(target)) {
                ByteBuffer msg = ByteBuffer.allocateDirect(OBJECT_SIZE);
                sendsFor(c, msg, warmNanos);
                io.say("READY");
                io.expect("GO");
                result = sendsFor(c, msg, runNanos);
            }
        }
        io.say("RESULT ops=" + result[0] + " nanos=" + result[1]);
    }

    private static long[] putsFor(DepotClient client, ObjectId[] ids, MemorySegment payload, long[] counter,
                                  long nanos) {
        long start = System.nanoTime();
        long ops = 0;
        long now;
        do {
            for (int b = 0; b < 256; b++) {
                long i = counter[0]++;
                try (ObjectWriter w = client.create(ids[(int) (i % RING)], OBJECT_SIZE)) {
                    MemorySegment.copy(payload, 0, w.data(), 0, OBJECT_SIZE);
                    w.seal();
                }
                if (i >= LIVE) {
                    client.delete(ids[(int) ((i - LIVE) % RING)]);
                }
            }
            ops += 256;
            now = System.nanoTime();
        } while (now - start < nanos);
        return new long[] {ops, now - start};
    }

    private static long[] sendsFor(SocketChannel c, ByteBuffer msg, long nanos) throws Exception {
        long start = System.nanoTime();
        long ops = 0;
        long now;
        do {
            for (int b = 0; b < 256; b++) {
                msg.clear();
                UnixSockets.writeFully(c, msg);
            }
            ops += 256;
            now = System.nanoTime();
        } while (now - start < nanos);
        return new long[] {ops, now - start};
    }
}
