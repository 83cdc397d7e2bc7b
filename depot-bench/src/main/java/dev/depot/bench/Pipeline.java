package dev.depot.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.IntConsumer;

/**
 * Producer JVMs make float64 arrays of {@code size} bytes and consumer JVMs sum them (in independent pairs that
 * run at the same time, each producer feeding its own consumer), handed over either
 * through a Depot store or serialized over a TCP loopback socket. Each object starts with an 8-byte header, the
 * producer's {@code System.nanoTime()} taken when the array is filled and the hand-off starts; the consumer
 * takes its own when the array is usable (Depot: the get returned; TCP: received and deserialized). That
 * difference is the hand-off; Depot's also counts the producer's create.
 *
 * <p>Two phases: lock-step (the producer waits for the consumer's acknowledgement before the next object, so
 * hand-off times hold no queueing; the first {@code warm} objects are not counted), then free-running for
 * throughput, measured after as many free-running objects again not counted: by then every process has touched
 * every block it will use, as in a long-running pipeline (each first access of a page by a process costs
 * ~11 µs on this VM, and which blocks a producer gets depends on which its consumer, or another pair's, freed).
 * The consumer checks every sum. Used by {@link PipelineBench} and {@link DemoMain}.
 */
final class Pipeline {
    static final String PRODUCER_ROLE = "pipe-producer";
    static final String CONSUMER_ROLE = "pipe-consumer";
    static final String TCP_PRODUCER_ROLE = "tcp-producer";
    static final String TCP_CONSUMER_ROLE = "tcp-consumer";

    /** How many objects of which size go through each phase, in each of {@code pairs} producer/consumer pairs. */
    record Plan(long size, int warm, int lockstep, int free, int pairs) {
        int total() {
            return measuredFrom() + free;
        }

        /** Whether object {@code i} goes through the lock-step phase (else free-running). */
        boolean lockstep(int i) {
            return i < warm + lockstep;
        }

        /** Whether object {@code i}'s hand-off is recorded: the lock-step objects after the first {@code warm}. */
        boolean recordsHandoff(int i) {
            return i >= warm && lockstep(i);
        }

        /** The first free-running object that is measured; the {@code free} before it warm the processes up. */
        int measuredFrom() {
            return warm + lockstep + free;
        }

        String[] args() {
            return new String[] {Long.toString(size), Integer.toString(warm), Integer.toString(lockstep),
                Integer.toString(free)};
        }

        static Plan parse(String[] a, int from) {
            return new Plan(Long.parseLong(a[from]), Integer.parseInt(a[from + 1]), Integer.parseInt(a[from + 2]),
                Integer.parseInt(a[from + 3]), 1);
        }

        long doubles() {
            return size / Double.BYTES - 1;
        }
    }

    /**
     * The figures of one mechanism: hand-off times in ns (p50: mean over the pairs; p99: the largest), throughput of
     * the free-running phase over all pairs, and for Depot the producers' create p50 (included in the hand-off)
     * and seal p50 (the stamp to the seal's return, futex wake included; part of the hand-off); the consumers'
     * and (Depot; -1 for TCP) the producers' minor page faults per object in the free-running phase (first
     * touches of pages), and (Depot) where the free-running phase's time goes ({@link #perObject}).
     */
    record Stats(double handoffP50, double handoffP99, double objectsPerSecond, double gibPerSecond,
                 double createP50, double sealP50, double consumerFaultsPerObject, double producerFaultsPerObject,
                 Map<String, Double> profile) {
    }

    /**
     * The free-running phase's time per object in µs, by step (Depot: {@code free_create} with any wait for
     * room, {@code free_fill}, {@code free_seal}; {@code free_get} with any wait for the seal, {@code free_sum},
     * {@code free_delete}), from the children's totals in ns.
     */
    private static Map<String, Double> perObject(Map<String, Double> totals, Plan plan) {
        Map<String, Double> m = new java.util.LinkedHashMap<>();
        double objects = (double) plan.free * plan.pairs;
        totals.forEach((k, v) -> m.put(k + "_us", v / objects / 1e3));
        return m;
    }

    private Pipeline() {
    }

    /** Runs the pairs through the store in {@code dir}; {@code progress} gets the objects consumed so far. */
    static Stats viaDepot(Path dir, Plan plan, IntConsumer progress) {
        List<Child> producers = new ArrayList<>();
        List<Child> consumers = new ArrayList<>();
        try {
            for (int pair = 0; pair < plan.pairs; pair++) {
                String[] args = concat(dir.toString(), concat(Integer.toString(pair), plan.args()));
                consumers.add(Child.start(CONSUMER_ROLE, 128, args));
                producers.add(Child.start(PRODUCER_ROLE, 128, args));
            }
            Stats s = drive(producers, consumers, plan, progress);
            double create = 0;
            double seal = 0;
            long producerFaults = 0;
            Map<String, Double> profile = new java.util.LinkedHashMap<>();
            for (Child p : producers) {
                Map<String, String> r = ChildIo.fields(p.awaitLine("RESULT", 60));
                create += Latencies.parse(r.get("create"))[1] / plan.pairs;
                seal += Latencies.parse(r.get("seal"))[1] / plan.pairs;
                producerFaults += Long.parseLong(r.get("faults"));
                for (String k : List.of("free_create", "free_fill", "free_seal")) {
                    profile.merge(k, Double.parseDouble(r.get(k)), Double::sum);
                }
            }
            profile.putAll(s.profile);
            awaitExits(producers, consumers);
            return new Stats(s.handoffP50 + create, s.handoffP99 + create, s.objectsPerSecond, s.gibPerSecond,
                create, seal, s.consumerFaultsPerObject, producerFaults / ((double) plan.free * plan.pairs),
                perObject(profile, plan));
        } finally {
            Child.closeAll(producers);
            Child.closeAll(consumers);
        }
    }

    /** The baseline: the same over TCP loopback, serialized into a buffer and deserialized into a double[]. */
    static Stats viaTcp(Plan plan, IntConsumer progress) {
        int heap = (int) (3 * plan.size / Units.MIB + 128);
        List<Child> producers = new ArrayList<>();
        List<Child> consumers = new ArrayList<>();
        try {
            for (int pair = 0; pair < plan.pairs; pair++) {
                Child consumer = Child.start(TCP_CONSUMER_ROLE, heap, plan.args());
                consumers.add(consumer);
                String port = ChildIo.fields(consumer.awaitLine("PORT", 60)).get("port");
                producers.add(Child.start(TCP_PRODUCER_ROLE, heap, concat(port, plan.args())));
            }
            Stats s = drive(producers, consumers, plan, progress);
            for (Child p : producers) {
                p.awaitLine("RESULT", 60);
            }
            awaitExits(producers, consumers);
            return s;
        } finally {
            Child.closeAll(producers);
            Child.closeAll(consumers);
        }
    }

    private static void awaitExits(List<Child> producers, List<Child> consumers) {
        for (Child c : producers) {
            c.awaitExit(30);
        }
        for (Child c : consumers) {
            c.awaitExit(30);
        }
    }

    /** Lock-step phase, then every pair starts the free-running phase at once; collects the consumers' results. */
    private static Stats drive(List<Child> producers, List<Child> consumers, Plan plan, IntConsumer progress) {
        int[] consumed = {0};
        for (Child c : consumers) {
            linesUntil(c, "READY", progress, consumed);
        }
        for (Child p : producers) {
            p.awaitLine("READY", 120);
        }
        for (int i = 0; i < consumers.size(); i++) {
            consumers.get(i).send("GO");
            producers.get(i).send("GO");
        }
        double p50 = 0;
        double p99 = 0;
        long slowest = 0;
        long faults = 0;
        Map<String, Double> profile = new java.util.LinkedHashMap<>();
        for (Child c : consumers) {
            Map<String, String> r = ChildIo.fields(linesUntil(c, "RESULT", progress, consumed));
            double[] h = Latencies.parse(r.get("handoff"));
            p50 += h[1] / consumers.size();
            p99 = Math.max(p99, h[2]);
            slowest = Math.max(slowest, Long.parseLong(r.get("nanos")));
            faults += Long.parseLong(r.get("faults"));
            for (String k : List.of("free_get", "free_sum", "free_delete")) {
                if (r.containsKey(k)) {
                    profile.merge(k, Double.parseDouble(r.get(k)), Double::sum);
                }
            }
        }
        double seconds = slowest / 1e9;
        long objects = (long) plan.free * plan.pairs;
        return new Stats(p50, p99, objects / seconds, objects * plan.size / (double) Units.GIB / seconds, 0, 0,
            faults / (double) objects, -1, profile);
    }

    /**
     * Reads a consumer's lines up to the one starting with {@code prefix}, reporting each {@code GOT n} (n more
     * objects consumed) as progress.
     */
    private static String linesUntil(Child consumer, String prefix, IntConsumer progress, int[] consumed) {
        while (true) {
            String line = consumer.nextLine(120);
            if (line.startsWith(prefix)) {
                return line;
            }
            if (line.startsWith("GOT ")) {
                consumed[0] += Integer.parseInt(line.substring(4).trim());
                progress.accept(consumed[0]);
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
            case PRODUCER_ROLE -> PipelineDepotRoles.producer(Path.of(args[0]), args[1], Plan.parse(args, 2), io);
            case CONSUMER_ROLE -> PipelineDepotRoles.consumer(Path.of(args[0]), args[1], Plan.parse(args, 2), io);
            case TCP_PRODUCER_ROLE -> PipelineTcpRoles.producer(Integer.parseInt(args[0]), Plan.parse(args, 1), io);
            default -> PipelineTcpRoles.consumer(Plan.parse(args, 0), io);
        }
    }

    /**
     * A consumer's progress lines to the driver, at most one per {@link #PROGRESS_NANOS} (and one at the end):
     * a line per object would wake the driver's process for every object, and on 2 cores that wake-up takes the
     * CPU from the pair being measured (Depot and TCP alike).
     */
    static final class Progress {
        private static final long PROGRESS_NANOS = 10_000_000L;
        private final ChildIo io;
        private int unreported;
        private long last = System.nanoTime();

        Progress(ChildIo io) {
            this.io = io;
        }

        void consumed(boolean lastObject) {
            unreported++;
            long now = System.nanoTime();
            if (lastObject || now - last >= PROGRESS_NANOS) {
                io.say("GOT " + unreported);
                unreported = 0;
                last = now;
            }
        }
    }

    static void check(double sum, Plan plan, int i) {
        double n = plan.doubles();
        if (sum != n * (n - 1) / 2) {
            throw new IllegalStateException("object " + i + " sums to " + sum + ", expected " + n * (n - 1) / 2);
        }
    }
}
