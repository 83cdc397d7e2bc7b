package dev.depot.bench;

import java.io.PrintStream;
import java.util.function.IntConsumer;

/**
 * {@code depot demo}: a producer JVM hands float64 arrays to a consumer JVM that sums them, first through a
 * Depot store this process starts in a fresh directory under /dev/shm, then serialized over TCP loopback; shows
 * progress on stderr, prints a comparison and removes the store. {@code --quick} moves fewer, smaller arrays.
 */
public final class DemoMain {
    private DemoMain() {
    }

    public static void main(String[] args) {
        int status = run(args, System.out, System.err);
        if (status != 0) {
            System.exit(status);
        }
    }

    /** Runs the demo; returns the exit status (0, or 1 when it failed). */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        boolean quick = args.length > 0 && args[0].equals("--quick");
        Pipeline.Plan plan = quick ? new Pipeline.Plan(16 * Units.MIB, 1, 3, 8, 1)
            : new Pipeline.Plan(64 * Units.MIB, 1, 7, 24, 1);
        long capacity = 8 * plan.size() + 16 * Units.MIB;
        out.printf("Depot demo: a producer JVM hands %d float64 arrays of %s to a consumer JVM that sums them.%n",
            plan.total(), Units.size(plan.size()));
        try {
            Pipeline.Stats depot;
            try (BenchStore store = BenchStore.start(capacity)) {
                out.printf("store: %s (capacity %s, daemon embedded in this process, pid %d)%n", store.dir(),
                    Units.size(capacity), ProcessHandle.current().pid());
                out.flush();
                depot = Pipeline.viaDepot(store.dir(), plan, bar(err, "depot", plan.total()));
                err.println();
                out.printf("store removed: %s%n", store.dir());
            }
            Pipeline.Stats tcp = Pipeline.viaTcp(plan, bar(err, "tcp  ", plan.total()));
            err.println();
            out.println();
            out.printf("%-36s %16s %14s %12s%n", "", "hand-off (p50)", "throughput", "objects/s");
            row(out, "Depot (shared memory, zero-copy)", depot);
            row(out, "TCP loopback (serialize + send)", tcp);
            out.printf("%-36s %15sx %13sx%n", "Depot vs TCP (above 1: Depot better)",
                Units.round(tcp.handoffP50() / depot.handoffP50()), Units.round(depot.gibPerSecond() / tcp.gibPerSecond()));
            out.println();
            out.println("Hand-off: from the array being filled in the producer to it being readable in the consumer.");
            out.println("Throughput is bounded by filling and summing, which both ways do alike.");
            return 0;
        } catch (RuntimeException e) {
            err.println();
            err.println("depot demo failed: " + e);
            e.printStackTrace(err);
            return 1;
        }
    }

    private static void row(PrintStream out, String what, Pipeline.Stats s) {
        out.printf("%-36s %16s %10s GiB/s %12s%n", what, time(s.handoffP50()), Units.round(s.gibPerSecond()),
            Units.round(s.objectsPerSecond()));
    }

    private static String time(double nanos) {
        if (nanos >= 1e6) {
            return Units.round(nanos / 1e6) + " ms";
        }
        return Units.round(nanos / 1e3) + " us";
    }

    private static IntConsumer bar(PrintStream err, String label, int total) {
        return done -> {
            int width = 40;
            int filled = done * width / total;
            err.print("\r" + label + " [" + "#".repeat(filled) + " ".repeat(width - filled) + "] " + done + "/" + total);
            err.flush();
        };
    }
}
