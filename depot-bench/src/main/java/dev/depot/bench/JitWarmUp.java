package dev.depot.bench;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectView;
import dev.depot.client.ObjectWriter;
import java.lang.foreign.ValueLayout;

/**
 * Runs a child's Depot code paths before it is measured, never waiting, so that they are measured compiled by the
 * JIT's top tier. A few thousand measured objects alone leave them in its profiling tier (several times slower),
 * and the compiler threads of two JVMs compiling during the measurement take the 2 cores from the measured
 * threads (seen with {@code perf sched}: the children's main threads woke their C1 and C2 threads throughout a
 * pipeline run without it).
 */
final class JitWarmUp {
    /** Cycles of each path: well past C2's compile thresholds (10,000-15,000 invocations). */
    static final int CYCLES = 20_000;

    private JitWarmUp() {
    }

    /** Create, seal, get, release and delete of a 64-byte object, {@link #CYCLES} times, under ids of {@code who}. */
    static void depotCycles(DepotClient client, String who) {
        for (int i = 0; i < CYCLES; i++) {
            ObjectId id = ObjectId.of("depot-bench/warm/" + who + "/" + i);
            try (ObjectWriter w = client.create(id, 64)) {
                w.data().set(ValueLayout.JAVA_LONG, 0, System.nanoTime());
                w.seal();
            }
            try (ObjectView v = client.get(id, 30_000)) {
                v.data().get(ValueLayout.JAVA_LONG, 0);
            }
            client.delete(id);
        }
    }

    /** Runs {@code work} {@link #CYCLES} times (a role's fill or sum over a small buffer). */
    static void repeat(Runnable work) {
        for (int i = 0; i < CYCLES; i++) {
            work.run();
        }
    }
}
