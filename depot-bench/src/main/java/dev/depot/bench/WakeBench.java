package dev.depot.bench;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectView;
import dev.depot.client.ObjectWriter;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import org.HdrHistogram.Histogram;

/**
 * Process B blocks in {@code get(id, timeout)}; the driver (process A) writes {@code System.nanoTime()} (CLOCK_MONOTONIC,
 * the same clock in every process on Linux) into the object and seals it; B records now minus that stamp.
 * Baseline: B blocks in a read on a UNIX domain socket and A writes the stamp into it.
 */
final class WakeBench implements Benchmark {
    static final String ROLE = "wake";
    /** Time given to B to get into its wait after it said it is about to wait. */
    private static final long SETTLE_NANOS = 1_000_000;
    /** Wakes done first and not counted: the first ones load classes and link the futex downcall. */
    static final int WARM = 50;
    /**
     * Before the wakes, each process runs the code around them this many times without waiting (Depot: create,
     * seal, get, release, delete, see {@link JitWarmUp}; socket: 8-byte writes and reads), so that both sides are
     * measured compiled by the JIT's top tier.
     */
    static final int JIT_WARM = JitWarmUp.CYCLES;

    @Override
    public String name() {
        return "wake";
    }

    @Override
    public String description() {
        return "seal -> return of a get blocked in another process vs a blocked read on a UNIX socket";
    }

    @Override
    public void run(boolean quick, Consumer<Result> out) throws Exception {
        int count = quick ? 300 : 3000;
        int total = count + WARM;
        try (BenchStore store = BenchStore.start(16 * Units.MIB);
             ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            Path socketPath = store.dir().resolve("wake.sock");
            server.bind(UnixDomainSocketAddress.of(socketPath));
            DepotClient depot = store.server().client();
            JitWarmUp.depotCycles(depot, "wake-driver");
            JitWarmUp.waitCycles(depot, "wake-driver");
            try (Child b = Child.start(ROLE, 128, store.dir().toString(), socketPath.toString(),
                Integer.toString(total))) {
                for (int i = 0; i < total; i++) {
                    b.awaitLine("WAIT " + i, 60);
                    LockSupport.parkNanos(SETTLE_NANOS);
                    try (ObjectWriter w = depot.create(idOf(i), 64)) {
                        w.data().set(ValueLayout.JAVA_LONG, 0, System.nanoTime());
                        w.seal();
                    }
                }
                b.awaitLine("SCONNECTED", 60);
                try (SocketChannel c = server.accept()) {
                    ByteBuffer stamp = ByteBuffer.allocateDirect(Long.BYTES);
                    for (int i = 0; i < JIT_WARM; i++) {
                        stamp.clear();
                        UnixSockets.writeFully(c, stamp);
                    }
                    for (int i = 0; i < total; i++) {
                        b.awaitLine("SWAIT " + i, 60);
                        LockSupport.parkNanos(SETTLE_NANOS);
                        stamp.clear();
                        stamp.putLong(0, System.nanoTime());
                        UnixSockets.writeFully(c, stamp);
                    }
                }
                Map<String, String> r = ChildIo.fields(b.awaitLine("RESULT", 60));
                b.awaitExit(30);
                double[] d = Latencies.parse(r.get("depot"));
                double[] s = Latencies.parse(r.get("socket"));
                Map<String, Object> figures = GetLatencyBench.latencyFigures(d);
                Map<String, Object> baseline = GetLatencyBench.latencyFigures(s);
                baseline.put("kind", "blocked read on a UNIX domain socket, woken by an 8-byte write");
                out.accept(new Result(name(), count + " wakes", figures, baseline, s[1] / d[1],
                    "p50 <= 20 us", d[1] <= 20_000));
            }
        }
    }

    private static ObjectId idOf(int i) {
        return ObjectId.of("depot-bench/wake/" + i);
    }

    /** Child (process B): {@code DIR SOCKET COUNT}. */
    static void child(String[] args, ChildIo io) throws IOException {
        int count = Integer.parseInt(args[2]);
        Histogram depot = Latencies.histogram();
        try (DepotClient client = DepotClient.open(Path.of(args[0]))) {
            JitWarmUp.depotCycles(client, "wake-waiter");
            JitWarmUp.waitCycles(client, "wake-waiter");
            for (int i = 0; i < count; i++) {
                ObjectId id = idOf(i);
                io.say("WAIT " + i);
                try (ObjectView v = client.get(id, 30_000)) {
                    long now = System.nanoTime();
                    if (i >= WARM) {
                        Latencies.record(depot, now - v.data().get(ValueLayout.JAVA_LONG, 0));
                    }
                }
                client.delete(id);
            }
        }
        Histogram socket = Latencies.histogram();
        try (SocketChannel c = UnixSockets.connect(Path.of(args[1]))) {
            io.say("SCONNECTED");
            ByteBuffer stamp = ByteBuffer.allocateDirect(Long.BYTES);
            for (int i = 0; i < JIT_WARM; i++) {
                stamp.clear();
                UnixSockets.readFully(c, stamp);
            }
            for (int i = 0; i < count; i++) {
                io.say("SWAIT " + i);
                stamp.clear();
                UnixSockets.readFully(c, stamp);
                long now = System.nanoTime();
                if (i >= WARM) {
                    Latencies.record(socket, now - stamp.getLong(0));
                }
            }
        }
        io.say("RESULT depot=" + Latencies.summary(depot) + " socket=" + Latencies.summary(socket));
    }
}
