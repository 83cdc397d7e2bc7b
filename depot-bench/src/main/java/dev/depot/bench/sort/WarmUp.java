package dev.depot.bench.sort;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * Runs every step the sort demo times, on small arrays, until the JIT has compiled them: the same routine in
 * every JVM of the demo, the single process's as the workers', before their timed part.
 *
 * <p>Why: the first {@code Arrays.sort} of 5*10^7 doubles in a fresh JVM took 1.67 CPU s here, one after a
 * warm-up of 0.14 s took 0.91 s (its outer partitioning loops run in the interpreter and in C1's code until
 * C2's arrive, and the compiler threads run beside it). A fresh JVM pays that once per process: the single
 * process once, each worker once, and the workers' compiler threads then compete for the cores with the other
 * worker's sort, while the single process's have an idle core. Warmed up, every process measures its
 * steady-state sort. {@code --no-warmup} measures them cold.
 */
final class WarmUp {
    /** Values per round: above {@code Arrays.sort}'s thresholds for its run merging and its recursion. */
    static final int VALUES = 1 << 16;
    /** Rounds: the steps' loops then have run far past C2's compile thresholds. */
    static final int ROUNDS = 48;

    private WarmUp() {
    }

    /** Runs the rounds on values of {@code type} (with the specials when the run has them); returns a checksum. */
    static long run(SortData type, boolean specials) {
        long sink = 0;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment shared = arena.allocate((long) VALUES * Long.BYTES, Long.BYTES);  // as a store's slice
            for (int r = 0; r < ROUNDS; r++) {
                MemorySegment work = SampleSort.newArray(type, VALUES + VALUES / 16);
                MemorySegment mine = work.asSlice(0, (long) VALUES * Long.BYTES);
                sink += type.generate(~r, 0, VALUES, specials, mine);
                long[] sampleKeys = SampleSort.sampleKeys(type, mine, SampleSort.SAMPLES, r);
                long[] splitters = SampleSort.splitters(sampleKeys, 2 + r % 3);
                long kept = SampleSort.partitionInPlace(type, mine, splitters[0], r % 2);
                MemorySegment.copy(mine, kept * Long.BYTES, shared, 0, (VALUES - kept) * Long.BYTES);
                long[] counts = SampleSort.count(type, mine, splitters);
                MemorySegment[] out = new MemorySegment[counts.length];
                for (int p = 0; p < out.length; p++) {
                    out[p] = SampleSort.newArray(type, counts[p]);
                }
                SampleSort.scatterKeeping(type, mine, splitters, 0, out);
                MemorySegment part = SampleSort.gatherAfter(type, work, kept * Long.BYTES,
                    List.of(shared.asSlice(0, (VALUES - kept) * Long.BYTES)));
                SampleSort.sortInPlace(part);
                sink += SampleSort.firstDisorder(type, part) + SampleSort.checksum(part);
                // The bucketed local sort's steps (FineBuckets), with 1 to 3 partitions.
                FineBuckets buckets = FineBuckets.of(type, sampleKeys, 1 + r % 3, 16);
                long[] bucketCounts = buckets.count(mine);
                buckets.scatter(mine, bucketCounts, shared);
                MemorySegment sorted = buckets.gatherSorted(0, List.of(shared.asSlice(0,
                    buckets.partitionBytes(bucketCounts)[0])), work);
                sink += SampleSort.firstDisorder(type, sorted) + SampleSort.checksum(sorted);
            }
        }
        return sink;
    }
}
