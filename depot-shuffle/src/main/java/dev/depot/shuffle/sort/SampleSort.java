package dev.depot.shuffle.sort;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The steps of the sample sort, on 64-bit words of one {@link SortData} type: sample, choose splitters,
 * partition (count, then scatter straight into the shuffle's slices), sort locally, check.
 */
public final class SampleSort {
    /** Samples each worker contributes; the splitters come from all of them. */
    public static final int SAMPLES_PER_WORKER = 4096;

    private SampleSort() {
    }

    /** {@code n} keys sampled at random positions of {@code words} (with replacement). */
    public static long[] sampleKeys(SortData type, MemorySegment words, int n, long seed) {
        long count = words.byteSize() / Long.BYTES;
        long[] out = new long[count == 0 ? 0 : n];
        SplittableRandom rnd = new SplittableRandom(seed);
        for (int i = 0; i < out.length; i++) {
            out[i] = type.key(words.getAtIndex(ValueLayout.JAVA_LONG, rnd.nextLong(count)));
        }
        return out;
    }

    /** {@code partitions - 1} splitter keys at even ranks of all samples; partition p takes keys in [s[p-1], s[p]). */
    public static long[] splitters(long[] sampleKeys, int partitions) {
        long[] sorted = sampleKeys.clone();
        Arrays.sort(sorted);
        long[] s = new long[partitions - 1];
        for (int i = 1; i < partitions; i++) {
            s[i - 1] = sorted.length == 0 ? Long.MAX_VALUE : sorted[(int) ((long) sorted.length * i / partitions)];
        }
        return s;
    }

    /** The partition of {@code key}: the number of splitters not greater than it. */
    public static int partitionOf(long key, long[] splitters) {
        int lo = 0;
        int hi = splitters.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (splitters[mid] <= key) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** How many words fall in each partition. */
    public static long[] count(SortData type, MemorySegment words, long[] splitters) {
        long[] counts = new long[splitters.length + 1];
        long n = words.byteSize() / Long.BYTES;
        for (long i = 0; i < n; i++) {
            counts[partitionOf(type.key(words.getAtIndex(ValueLayout.JAVA_LONG, i)), splitters)]++;
        }
        return counts;
    }

    /** Copies every word into its partition's segment (each sized by {@link #count}), in input order. */
    public static void scatter(SortData type, MemorySegment words, long[] splitters, MemorySegment[] out) {
        long[] next = new long[out.length];
        long n = words.byteSize() / Long.BYTES;
        for (long i = 0; i < n; i++) {
            long w = words.getAtIndex(ValueLayout.JAVA_LONG, i);
            int p = partitionOf(type.key(w), splitters);
            out[p].setAtIndex(ValueLayout.JAVA_LONG, next[p]++, w);
        }
    }

    /** A heap array of the type ({@code double[]} or {@code long[]}) of {@code n} values, as a segment. */
    public static MemorySegment newArray(SortData type, long n) {
        if (n > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException(n + " values are more than a Java array holds; use more workers");
        }
        return type == SortData.FLOAT64 ? MemorySegment.ofArray(new double[(int) n])
            : MemorySegment.ofArray(new long[(int) n]);
    }

    /**
     * Copies the slices, one after the other, into the start of {@code work} (a segment {@link #newArray} made,
     * or a new one when they do not fit) and returns the filled part, ready for {@link #sortInPlace}.
     */
    public static MemorySegment gather(SortData type, List<MemorySegment> slices, MemorySegment work) {
        long bytes = 0;
        for (MemorySegment s : slices) {
            bytes += s.byteSize();
        }
        MemorySegment out = bytes <= work.byteSize() ? work.asSlice(0, bytes) : newArray(type, bytes / Long.BYTES);
        long at = 0;
        for (MemorySegment s : slices) {
            MemorySegment.copy(s, 0, out, at, s.byteSize());
            at += s.byteSize();
        }
        return out;
    }

    /** As {@link #gather(SortData, List, MemorySegment)} into a new array. */
    public static MemorySegment gather(SortData type, List<MemorySegment> slices) {
        return gather(type, slices, MemorySegment.ofArray(new long[0]));
    }

    /**
     * Sorts a heap segment (all of a {@code double[]} or {@code long[]}, or a slice of one) with
     * {@code Arrays.sort}, in its order for the type.
     */
    public static void sortInPlace(MemorySegment values) {
        Object array = values.heapBase().orElseThrow(() -> new IllegalArgumentException("not a heap segment"));
        // A heap segment's address is its byte offset in the array.
        int from = (int) (values.address() / Long.BYTES);
        int to = from + (int) (values.byteSize() / Long.BYTES);
        if (array instanceof double[] d) {
            Arrays.sort(d, from, to);
        } else if (array instanceof long[] l) {
            Arrays.sort(l, from, to);
        } else {
            throw new IllegalArgumentException("cannot sort a segment over " + array.getClass().getSimpleName());
        }
    }

    /** Index of the first element out of order ({@code key(a[i]) > key(a[i+1])}), or -1 when sorted. */
    public static long firstDisorder(SortData type, MemorySegment words) {
        long n = words.byteSize() / Long.BYTES;
        long previous = Long.MIN_VALUE;
        for (long i = 0; i < n; i++) {
            long k = type.key(words.getAtIndex(ValueLayout.JAVA_LONG, i));
            if (k < previous) {
                return i - 1;
            }
            previous = k;
        }
        return -1;
    }

    /** The order-independent checksum of the words ({@link SortData#mix}). */
    public static long checksum(MemorySegment words) {
        long n = words.byteSize() / Long.BYTES;
        long sum = 0;
        for (long i = 0; i < n; i++) {
            sum += SortData.mix(words.getAtIndex(ValueLayout.JAVA_LONG, i));
        }
        return sum;
    }
}
