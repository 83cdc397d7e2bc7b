package dev.depot.bench;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectView;
import dev.depot.client.ObjectWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import org.HdrHistogram.Histogram;

/**
 * The child side of {@link Pipeline} through a Depot store: the producer creates each array in shared memory,
 * fills it in place and seals it; the consumer gets it, sums it in place and deletes it. In the lock-step phase
 * the consumer acknowledges each array with a small object of its own.
 */
final class PipelineDepotRoles {
    private static final long TIMEOUT_MILLIS = 60_000;
    /** Doubles in the private buffer the fill and sum loops are warmed up on (see {@link JitWarmUp}). */
    static final int WARM_DOUBLES = 4096;

    private PipelineDepotRoles() {
    }

    private static ObjectId dataId(String pair, String phase, int i) {
        return ObjectId.of("depot-bench/pipeline/" + pair + "/" + phase + "/" + i);
    }

    private static ObjectId ackId(String pair, int i) {
        return ObjectId.of("depot-bench/pipeline/" + pair + "/ack/" + i);
    }

    static void producer(Path dir, String pair, Pipeline.Plan plan, ChildIo io) {
        Histogram create = Latencies.histogram();
        Histogram seal = Latencies.histogram();
        // Free-running phase totals: create (with any wait for room), fill, seal.
        long createNanos = 0;
        long fillNanos = 0;
        long sealNanos = 0;
        long faults = 0;
        try (DepotClient client = DepotClient.open(dir); Arena arena = Arena.ofConfined()) {
            JitWarmUp.depotCycles(client, pair + "/producer");
            JitWarmUp.waitCycles(client, pair + "/producer");
            MemorySegment small = arena.allocate(WARM_DOUBLES * Double.BYTES, Double.BYTES);
            JitWarmUp.repeat(() -> fill(small, WARM_DOUBLES));
            int go = plan.measuredFrom();
            for (int i = 0; i < plan.total(); i++) {
                if (i == go) {
                    io.say("READY");
                    io.expect("GO");
                    faults = MinorFaults.now();
                }
                long t0 = System.nanoTime();
                try (ObjectWriter w = createWhenRoom(client, dataId(pair, plan.lockstep(i) ? "l" : "f", i), plan.size())) {
                    if (plan.recordsHandoff(i)) {
                        Latencies.record(create, System.nanoTime() - t0);
                    }
                    long tc = System.nanoTime();
                    MemorySegment d = w.data();
                    fill(d.asSlice(Long.BYTES), (int) plan.doubles());
                    long stamp = System.nanoTime();
                    if (i >= go) {
                        createNanos += tc - t0;
                        fillNanos += stamp - tc;
                    }
                    d.set(ValueLayout.JAVA_LONG, 0, stamp);
                    w.seal();
                    if (plan.recordsHandoff(i)) {
                        Latencies.record(seal, System.nanoTime() - stamp);
                    }
                    if (i >= go) {
                        sealNanos += System.nanoTime() - stamp;
                    }
                }
                if (plan.lockstep(i)) {
                    client.get(ackId(pair, i), TIMEOUT_MILLIS).close();
                    client.delete(ackId(pair, i));
                }
            }
            faults = MinorFaults.now() - faults;
        }
        io.say("RESULT create=" + Latencies.summary(create) + " seal=" + Latencies.summary(seal) + " free_create="
            + createNanos + " free_fill=" + fillNanos + " free_seal=" + sealNanos + " faults=" + faults);
    }

    /**
     * Creates without evicting: objects not yet consumed must stay. While the store is full the create sleeps
     * on the store's space futex word until the consumer's delete frees room (no polling).
     */
    private static ObjectWriter createWhenRoom(DepotClient client, ObjectId id, long size) {
        return client.create(id, size, new byte[0], Duration.ofMillis(TIMEOUT_MILLIS), DepotClient.CreateOption.NO_EVICT);
    }

    /**
     * The producer's work, in a method of its own: compiled once as a whole method, it is not thrown away when
     * the role's long loop deoptimizes (at its first free-running object, for one), which left the loop
     * running interpreted at 60-100 ns per element for seconds on the loaded 2-core machine.
     */
    private static void fill(MemorySegment body, int n) {
        for (int j = 0; j < n; j++) {
            body.setAtIndex(ValueLayout.JAVA_DOUBLE, j, j);
        }
    }

    /** The consumer's work, in a method of its own (see {@link #fill}). */
    private static double sum(MemorySegment body, int n) {
        double sum = 0;
        for (int j = 0; j < n; j++) {
            sum += body.getAtIndex(ValueLayout.JAVA_DOUBLE, j);
        }
        return sum;
    }

    static void consumer(Path dir, String pair, Pipeline.Plan plan, ChildIo io) {
        Histogram handoff = Latencies.histogram();
        long start = 0;
        long faults = 0;
        // Free-running phase totals: get (with any wait for the seal), sum, delete.
        long getNanos = 0;
        long sumNanos = 0;
        long deleteNanos = 0;
        try (DepotClient client = DepotClient.open(dir); Arena arena = Arena.ofConfined()) {
            JitWarmUp.depotCycles(client, pair + "/consumer");
            JitWarmUp.waitCycles(client, pair + "/consumer");
            MemorySegment small = arena.allocate(WARM_DOUBLES * Double.BYTES, Double.BYTES);
            JitWarmUp.repeat(() -> sum(small, WARM_DOUBLES));
            Pipeline.Progress progress = new Pipeline.Progress(io);
            int go = plan.measuredFrom();
            for (int i = 0; i < plan.total(); i++) {
                if (i == go) {
                    io.say("READY");
                    io.expect("GO");
                    start = System.nanoTime();
                    faults = MinorFaults.now();
                }
                ObjectId id = dataId(pair, plan.lockstep(i) ? "l" : "f", i);
                long g0 = System.nanoTime();
                try (ObjectView v = client.get(id, TIMEOUT_MILLIS)) {
                    long now = System.nanoTime();
                    if (i >= go) {
                        getNanos += now - g0;
                    }
                    MemorySegment d = v.data();
                    if (plan.recordsHandoff(i)) {
                        Latencies.record(handoff, now - d.get(ValueLayout.JAVA_LONG, 0));
                    }
                    Pipeline.check(sum(d.asSlice(Long.BYTES), (int) plan.doubles()), plan, i);
                    if (i >= go) {
                        sumNanos += System.nanoTime() - now;
                    }
                }
                long d0 = System.nanoTime();
                client.delete(id);
                if (i >= go) {
                    deleteNanos += System.nanoTime() - d0;
                }
                if (plan.lockstep(i)) {
                    client.put(ackId(pair, i), new byte[8]);
                }
                progress.consumed(i == plan.total() - 1);
            }
        }
        io.say("RESULT handoff=" + Latencies.summary(handoff) + " nanos=" + (System.nanoTime() - start)
            + " faults=" + (MinorFaults.now() - faults) + " free_get=" + getNanos + " free_sum=" + sumNanos
            + " free_delete=" + deleteNanos);
    }
}
