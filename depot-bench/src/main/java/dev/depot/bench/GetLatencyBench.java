package dev.depot.bench;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectView;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;
import org.HdrHistogram.Histogram;

/**
 * A second process gets a sealed 1 KiB object (lookup, pin, view, read a byte, release), timed per operation;
 * baseline: a 16-byte request/response round trip over a UNIX domain socket between the same two processes.
 */
final class GetLatencyBench implements Benchmark {
    static final String ROLE = "get-latency";
    private static final ObjectId ID = ObjectId.of("depot-bench/get-latency");

    @Override
    public String name() {
        return "get-latency";
    }

    @Override
    public String description() {
        return "get (lookup+pin+view+release) of a sealed 1 KiB object from a second process vs a 16-byte UNIX socket round trip";
    }

    @Override
    public void run(boolean quick, Consumer<Result> out) throws Exception {
        long ops = quick ? 100_000 : 1_000_000;
        long socketOps = quick ? 20_000 : 200_000;
        try (BenchStore store = BenchStore.start(64 * Units.MIB);
             UnixSockets echo = UnixSockets.serve(store.dir().resolve("echo.sock"), UnixSockets.Mode.ECHO)) {
            store.server().client().put(ID, new byte[1024]);
            try (Child child = Child.start(ROLE, 128, store.dir().toString(), echo.path().toString(),
                Long.toString(ops), Long.toString(socketOps))) {
                Map<String, String> r = ChildIo.fields(child.awaitLine("RESULT", 300));
                child.awaitExit(30);
                double[] depot = Latencies.parse(r.get("depot"));
                double[] socket = Latencies.parse(r.get("socket"));
                Map<String, Object> figures = latencyFigures(depot);
                figures.put("timer_overhead_ns", Double.parseDouble(r.get("timer")));
                Map<String, Object> baseline = latencyFigures(socket);
                baseline.put("kind", "16-byte round trip over a UNIX domain socket");
                double ratio = socket[1] / depot[1];
                out.accept(new Result(name(), "1 KiB object, " + ops + " gets", figures, baseline, ratio,
                    "p50 <= 1 us and >= 30x below the socket round trip", depot[1] <= 1000 && ratio >= 30));
            }
        }
    }

    static Map<String, Object> latencyFigures(double[] s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("ops", (long) s[0]);
        m.put("p50_ns", (long) s[1]);
        m.put("p99_ns", (long) s[2]);
        m.put("p999_ns", (long) s[3]);
        m.put("max_ns", (long) s[4]);
        m.put("mean_ns", s[5]);
        return m;
    }

    /** Child: {@code DIR SOCKET OPS SOCKET_OPS}. */
    static void child(String[] args, ChildIo io) throws Exception {
        Path dir = Path.of(args[0]);
        Path socketPath = Path.of(args[1]);
        long ops = Long.parseLong(args[2]);
        long socketOps = Long.parseLong(args[3]);
        Histogram depot = Latencies.histogram();
        long sink = 0;
        try (DepotClient client = DepotClient.open(dir)) {
            sink += gets(client, Latencies.histogram(), Math.max(50_000, ops / 5));
            sink += gets(client, depot, ops);
        }
        Histogram socket = Latencies.histogram();
        try (SocketChannel c = UnixSockets.connect(socketPath)) {
            roundTrips(c, Latencies.histogram(), Math.max(5_000, socketOps / 10));
            roundTrips(c, socket, socketOps);
        }
        io.say("RESULT depot=" + Latencies.summary(depot) + " socket=" + Latencies.summary(socket)
            + " timer=" + timerOverhead()
            + " sink=" + sink);
    }

    private static long gets(DepotClient client, Histogram h, long ops) {
        long sink = 0;
        for (long i = 0; i < ops; i++) {
            long t0 = System.nanoTime();
            try (ObjectView v = client.get(ID, 0)) {
                sink += v.data().get(ValueLayout.JAVA_BYTE, 0);
            }
            Latencies.record(h, System.nanoTime() - t0);
        }
        return sink;
    }

    private static void roundTrips(SocketChannel c, Histogram h, long ops) throws Exception {
        ByteBuffer buf = ByteBuffer.allocateDirect(UnixSockets.ECHO_LENGTH);
        for (long i = 0; i < ops; i++) {
            long t0 = System.nanoTime();
            buf.clear();
            buf.putLong(0, i);
            UnixSockets.writeFully(c, buf);
            buf.clear();
            UnixSockets.readFully(c, buf);
            Latencies.record(h, System.nanoTime() - t0);
        }
    }

    /** Median cost of two back-to-back {@code System.nanoTime()} calls: included in every per-op figure. */
    static long timerOverhead() {
        Histogram h = Latencies.histogram();
        for (int i = 0; i < 200_000; i++) {
            long t0 = System.nanoTime();
            Latencies.record(h, System.nanoTime() - t0);
        }
        return h.getValueAtPercentile(50);
    }
}
