package dev.depot.bench;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectView;
import dev.depot.client.ObjectWriter;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

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

    /** Blocking gets woken by a seal in {@link #waitCycles}: each one sleeps, so few are enough to compile them. */
    static final int WAIT_CYCLES = 3_000;
    /** How long the sealing thread of {@link #waitCycles} lets the get wait: past its 20 µs spin, so it sleeps. */
    private static final long WAIT_NANOS = 50_000;

    /**
     * The paths of a get that sleeps and is woken, and of a seal that wakes it, {@link #WAIT_CYCLES} times within
     * this process: a second thread seals each object after the get has gone to sleep on it. {@link #depotCycles}
     * never waits, so the JIT would compile the seal without its wake-up and the get without its wait, and
     * recompile both (after running them in its profiling tier) once the measured wake-ups take those branches.
     */
    static void waitCycles(DepotClient client, String who) {
        AtomicInteger waiting = new AtomicInteger(-1);
        Thread sealer = Thread.ofPlatform().name("depot-bench-warm-sealer").start(() -> {
            for (int i = 0; i < WAIT_CYCLES; i++) {
                while (waiting.get() < i) {
                    Thread.onSpinWait();
                }
                LockSupport.parkNanos(WAIT_NANOS);
                try (ObjectWriter w = client.create(waitId(who, i), 64)) {
                    w.seal();
                }
            }
        });
        try {
            for (int i = 0; i < WAIT_CYCLES; i++) {
                waiting.set(i);
                try (ObjectView v = client.get(waitId(who, i), 30_000)) {
                    v.data().get(ValueLayout.JAVA_LONG, 0);
                }
                client.delete(waitId(who, i));
            }
        } finally {
            try {
                sealer.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static ObjectId waitId(String who, int i) {
        return ObjectId.of("depot-bench/warm-wait/" + who + "/" + i);
    }

    /** Runs {@code work} {@link #CYCLES} times (a role's fill or sum over a small buffer). */
    static void repeat(Runnable work) {
        for (int i = 0; i < CYCLES; i++) {
            work.run();
        }
    }
}
