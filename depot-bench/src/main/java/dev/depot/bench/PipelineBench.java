package dev.depot.bench;

import dev.depot.core.heap.HeapBlockDescriptor;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Producer JVMs -> consumer JVMs (1 and 2 pairs) of float64 arrays through Depot vs serialized over TCP loopback;
 * see {@link Pipeline}.
 */
final class PipelineBench implements Benchmark {
    private static final long TARGET_SIZE = 64 * Units.MIB;
    private static final double TARGET_RATIO = 50;
    /**
     * Arrays each pair may have in the store at once: at least two (double buffering: the producer fills one
     * while the consumer sums the other, and a producer that is ahead blocks in its create until the consumer's
     * delete makes room, as a TCP producer blocks when the socket buffers are full), and as many as fit in
     * {@link #QUEUE_BYTES}. A deeper queue makes every process touch more of the heap for the first time, and on
     * this VM each first access of a page by a process costs ~11 µs (docs/BENCHMARKS.md): with 8 arrays of
     * 64 MiB per pair that was most of those cases' time, paid again for each new block, not once as TCP's reused
     * buffers pay it.
     */
    static final int MIN_QUEUE_DEPTH = 2;
    /**
     * Bytes of arrays a pair may have in the store at once, when more than two arrays fit: what TCP's send buffer
     * alone may hold on a loopback connection (it autotunes up to {@code net.ipv4.tcp_wmem}'s maximum, 4 MiB by
     * default; the receive buffer adds up to 6-32 MiB). With only two 1 MiB arrays the producer slept and woke
     * once per object while the TCP producer wrote ahead into its buffers.
     */
    static final long QUEUE_BYTES = 4 * Units.MIB;
    /** Room for the lock-step phase's 8-byte acknowledgements beside the arrays. */
    private static final long ACK_ROOM = Units.MIB;

    @Override
    public String name() {
        return "pipeline";
    }

    @Override
    public String description() {
        return "producer JVM -> consumer JVM of float64 arrays: hand-off overhead and throughput vs TCP loopback";
    }

    @Override
    public void run(boolean quick, Consumer<Result> out) {
        List<Pipeline.Plan> plans = quick
            ? List.of(new Pipeline.Plan(Units.MIB, 10, 40, 100, 1), new Pipeline.Plan(16 * Units.MIB, 2, 5, 10, 1),
                new Pipeline.Plan(16 * Units.MIB, 2, 5, 10, 2))
            : List.of(new Pipeline.Plan(Units.MIB, 50, 300, 1000, 1), new Pipeline.Plan(Units.MIB, 50, 300, 1000, 2),
                new Pipeline.Plan(TARGET_SIZE, 4, 16, 40, 1), new Pipeline.Plan(TARGET_SIZE, 4, 16, 40, 2));
        for (Pipeline.Plan plan : plans) {
            Pipeline.Stats depot;
            try (BenchStore store = BenchStore.start(capacity(plan))) {
                depot = Pipeline.viaDepot(store.dir(), plan, n -> { });
            }
            Pipeline.Stats tcp = Pipeline.viaTcp(plan, n -> { });
            double ratio = tcp.handoffP50() / depot.handoffP50();
            boolean targeted = plan.size() == TARGET_SIZE;
            String label = Units.size(plan.size()) + ", " + plan.pairs() + (plan.pairs() == 1 ? " producer, 1 consumer"
                : " producers, " + plan.pairs() + " consumers");
            out.accept(new Result(name(), label, figures(depot, plan),
                withKind(figures(tcp, plan)), ratio,
                targeted ? ">= 50x lower hand-off overhead at 64 MiB" : "none (the target is at 64 MiB)",
                !targeted || ratio >= TARGET_RATIO));
        }
    }

    /** Arrays each pair may have in the store at once: see {@link #MIN_QUEUE_DEPTH} and {@link #QUEUE_BYTES}. */
    static int queueDepth(Pipeline.Plan plan) {
        return (int) Math.max(MIN_QUEUE_DEPTH, QUEUE_BYTES / plan.size());
    }

    /** Store capacity for {@code plan}: {@link #queueDepth} blocks of its size per pair, plus the acknowledgements. */
    static long capacity(Pipeline.Plan plan) {
        return (long) queueDepth(plan) * plan.pairs() * HeapBlockDescriptor.blockSizeFor(plan.size(), 0) + ACK_ROOM;
    }

    private static Map<String, Object> figures(Pipeline.Stats s, Pipeline.Plan plan) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("size_bytes", plan.size());
        m.put("pairs", plan.pairs());
        if (s.createP50() > 0) {
            m.put("queue_depth", queueDepth(plan));
        }
        m.put("handoff_p50_us", s.handoffP50() / 1e3);
        m.put("handoff_p99_us", s.handoffP99() / 1e3);
        if (s.createP50() > 0) {
            m.put("create_p50_us", s.createP50() / 1e3);
            m.put("seal_p50_us", s.sealP50() / 1e3);
        }
        m.put("objects_per_s", s.objectsPerSecond());
        m.put("consumer_faults_per_object", s.consumerFaultsPerObject());
        if (s.producerFaultsPerObject() >= 0) {
            m.put("producer_faults_per_object", s.producerFaultsPerObject());
        }
        s.profile().forEach(m::put);
        m.put("gib_per_s", s.gibPerSecond());
        return m;
    }

    private static Map<String, Object> withKind(Map<String, Object> m) {
        Map<String, Object> k = new LinkedHashMap<>();
        k.put("kind", "serialize into a direct buffer, send over TCP loopback, deserialize into a double[]");
        k.putAll(m);
        return k;
    }
}
