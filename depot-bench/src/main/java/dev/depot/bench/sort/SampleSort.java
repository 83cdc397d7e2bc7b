package dev.depot.bench.sort;

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
    /**
     * Samples all workers contribute together; the splitters come from all of them. A partition's share of the
     * values is off by up to about {@code 0.5/sqrt(SAMPLES)} (0.28%) of them, and the busiest worker sets the
     * wall time: with 8,192 random samples the 10^8 run's two partitions were 49.4 and 50.6 million values (its
     * local sort 2.5% longer than the other's), with 32,768 stratified ones 49.9 and 50.1 million.
     */
    public static final int SAMPLES = 1 << 15;

    /** Samples each of {@code workers} contributes: its part of {@link #SAMPLES}, at least 4096. */
    public static int samplesPerWorker(int workers) {
        return Math.max(4096, SAMPLES / Math.max(1, workers));
    }

    private SampleSort() {
    }

    /**
     * {@code n} keys of {@code words}, one at a random position in each of {@code n} equal strata (stratified:
     * a smaller rank error than as many independent positions, and the reads go forwards through memory).
     */
    public static long[] sampleKeys(SortData type, MemorySegment words, int n, long seed) {
        long count = words.byteSize() / Long.BYTES;
        long[] out = new long[count == 0 ? 0 : n];
        SplittableRandom rnd = new SplittableRandom(seed);
        for (int i = 0; i < out.length; i++) {
            long from = count * i / n;  // count < 2^31 values, n < 2^31 samples: no overflow
            long to = count * (i + 1) / n;
            long at = to > from ? from + rnd.nextLong(to - from) : Math.min(from, count - 1);
            out[i] = type.key(words.getAtIndex(ValueLayout.JAVA_LONG, at));
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

    /** -1 when {@code a < b} (signed), else 0, computed without a branch (Hacker's Delight, 2-12). */
    static long lessMask(long a, long b) {
        long d = a - b;
        return (d ^ ((a ^ b) & (d ^ a))) >> 63;
    }

    /**
     * The splitters padded with {@code Long.MAX_VALUE} to {@code 2^k - 1} entries, the shape
     * {@link #classify} searches without branches.
     */
    static long[] searchTree(long[] splitters) {
        int size = 1;
        while (size - 1 < splitters.length) {
            size <<= 1;
        }
        long[] padded = new long[size - 1];
        java.util.Arrays.fill(padded, Long.MAX_VALUE);
        System.arraycopy(splitters, 0, padded, 0, splitters.length);
        return padded;
    }

    /**
     * {@link #partitionOf} without a branch: a binary search of {@link #searchTree} whose steps are masks, so
     * that random keys cost no mispredicted jumps (a mispredicted branch per value was most of the partition
     * pass). Padding counts as a splitter only for {@code Long.MAX_VALUE} keys, hence the clamp.
     */
    static int classify(long key, long[] tree, int partitions) {
        int p = 0;
        for (int step = (tree.length + 1) >>> 1; step > 0; step >>>= 1) {
            p += (int) (~lessMask(key, tree[p + step - 1]) & step);
        }
        return Math.min(p, partitions - 1);
    }

    /** How many words fall in each partition. */
    public static long[] count(SortData type, MemorySegment words, long[] splitters) {
        int partitions = splitters.length + 1;
        long[] tree = searchTree(splitters);
        long[] counts = new long[partitions];
        long n = words.byteSize() / Long.BYTES;
        if (type == SortData.FLOAT64) {
            for (long i = 0; i < n; i++) {
                counts[classify(SortData.floatKey(words.getAtIndex(ValueLayout.JAVA_LONG, i)), tree, partitions)]++;
            }
        } else {
            for (long i = 0; i < n; i++) {
                counts[classify(words.getAtIndex(ValueLayout.JAVA_LONG, i), tree, partitions)]++;
            }
        }
        return counts;
    }

    /** Copies every word into its partition's segment (each sized by {@link #count}), in input order. */
    public static void scatter(SortData type, MemorySegment words, long[] splitters, MemorySegment[] out) {
        int partitions = splitters.length + 1;
        long[] tree = searchTree(splitters);
        long[] next = new long[out.length];
        long n = words.byteSize() / Long.BYTES;
        for (long i = 0; i < n; i++) {
            long w = words.getAtIndex(ValueLayout.JAVA_LONG, i);
            int p = classify(type.key(w), tree, partitions);
            out[p].setAtIndex(ValueLayout.JAVA_LONG, next[p]++, w);
        }
    }

    /**
     * Copies every word into {@code out}, where partition {@code p} starts after the {@code counts} of the
     * partitions before it (as a map's object of layout {@code PER_MAP} holds them), in input order.
     */
    public static void scatter(SortData type, MemorySegment words, long[] splitters, long[] counts, MemorySegment out) {
        int partitions = splitters.length + 1;
        long[] tree = searchTree(splitters);
        long[] next = new long[partitions];
        for (int p = 1; p < partitions; p++) {
            next[p] = next[p - 1] + counts[p - 1];
        }
        long n = words.byteSize() / Long.BYTES;
        if (n > out.byteSize() / Long.BYTES) {
            throw new IllegalArgumentException(n + " words do not fit in " + out.byteSize() + " bytes");
        }
        if (type == SortData.FLOAT64) {
            for (long i = 0; i < n; i++) {
                long w = words.getAtIndex(ValueLayout.JAVA_LONG, i);
                out.setAtIndex(ValueLayout.JAVA_LONG, next[classify(SortData.floatKey(w), tree, partitions)]++, w);
            }
        } else {
            for (long i = 0; i < n; i++) {
                long w = words.getAtIndex(ValueLayout.JAVA_LONG, i);
                out.setAtIndex(ValueLayout.JAVA_LONG, next[classify(w, tree, partitions)]++, w);
            }
        }
    }

    /**
     * The partition pass for two partitions, in one pass with one branch-free comparison per word and each word
     * written once: words whose key is below {@code splitter} fill {@code out} from the front (in input order),
     * the others from the back (in reverse input order: they are sorted later anyway). Returns how many are
     * below, the length of partition 0 in words.
     */
    public static long splitInTwo(SortData type, MemorySegment words, long splitter, MemorySegment out) {
        long n = words.byteSize() / Long.BYTES;
        if (n > out.byteSize() / Long.BYTES) {
            throw new IllegalArgumentException(n + " words do not fit in " + out.byteSize() + " bytes");
        }
        long front = 0;
        long back = n - 1;
        if (type == SortData.FLOAT64) {
            for (long i = 0; i < n; i++) {
                long w = words.getAtIndex(ValueLayout.JAVA_LONG, i);
                long below = lessMask(SortData.floatKey(w), splitter);       // -1 or 0
                out.setAtIndex(ValueLayout.JAVA_LONG, (front & below) | (back & ~below), w);
                front -= below;
                back -= 1 + below;
            }
        } else {
            for (long i = 0; i < n; i++) {
                long w = words.getAtIndex(ValueLayout.JAVA_LONG, i);
                long below = lessMask(w, splitter);
                out.setAtIndex(ValueLayout.JAVA_LONG, (front & below) | (back & ~below), w);
                front -= below;
                back -= 1 + below;
            }
        }
        return front;
    }

    /**
     * The partition pass of a worker that keeps its own partition, for two partitions: partitions
     * {@code words} in place with one branch-free comparison per word (a Lomuto pass whose swap is
     * unconditional), the words of partition {@code own} (0: keys below {@code splitter}, 1: the others) to the
     * front. Returns how many there are; the rest, the other partition's, follow them. On the workers' arrays (a
     * {@code double[]} of float64, a {@code long[]} of int64) it compares the values themselves
     * ({@link #partitionDoubles}, {@link #partitionLongs}): 2.5 times faster than through the segment and keys.
     */
    public static long partitionInPlace(SortData type, MemorySegment words, long splitter, int own) {
        Object base = words.heapBase().orElse(null);
        int from = (int) (words.address() / Long.BYTES);  // a heap segment's address is its offset in the array
        int to = from + (int) (words.byteSize() / Long.BYTES);
        double plain = plainSplitter(type, splitter);
        if (base instanceof double[] d && !Double.isNaN(plain)) {
            return partitionDoubles(d, from, to, plain, own == 0) - from;
        }
        if (base instanceof long[] l && type == SortData.INT64) {
            return partitionLongs(l, from, to, splitter, own == 0) - from;
        }
        long n = words.byteSize() / Long.BYTES;
        long flip = own == 0 ? 0 : -1;  // turns "below" into "not below" for partition 1
        long kept = 0;
        if (type == SortData.FLOAT64) {
            for (long i = 0; i < n; i++) {
                long w = words.getAtIndex(ValueLayout.JAVA_LONG, i);
                long mine = lessMask(SortData.floatKey(w), splitter) ^ flip;   // -1 or 0
                // words [kept, i) are the other partition's: swapping keeps that true whatever w is
                words.setAtIndex(ValueLayout.JAVA_LONG, i, words.getAtIndex(ValueLayout.JAVA_LONG, kept));
                words.setAtIndex(ValueLayout.JAVA_LONG, kept, w);
                kept -= mine;
            }
        } else {
            for (long i = 0; i < n; i++) {
                long w = words.getAtIndex(ValueLayout.JAVA_LONG, i);
                long mine = lessMask(w, splitter) ^ flip;
                words.setAtIndex(ValueLayout.JAVA_LONG, i, words.getAtIndex(ValueLayout.JAVA_LONG, kept));
                words.setAtIndex(ValueLayout.JAVA_LONG, kept, w);
                kept -= mine;
            }
        }
        return kept;
    }

    /**
     * The double {@code d} such that, for every double {@code x}, {@code x < d} exactly when
     * {@code key(x) < splitter}; NaN when there is none. A float64 splitter key is one of a value (or
     * {@code Long.MAX_VALUE}, above all). Below a key that is not +0.0's or NaN's lie exactly the values
     * {@code <} its double: NaN compares false and sorts last; -0.0 and 0.0 compare equal and have adjacent keys,
     * so they fall on the same side of any other value. Below +0.0's key is -0.0 too, and below NaN's every number,
     * which {@code <} does not say.
     */
    static double plainSplitter(SortData type, long splitter) {
        if (type != SortData.FLOAT64 || splitter == 0) {  // 0 is +0.0's key
            return Double.NaN;
        }
        return Double.longBitsToDouble(splitter ^ ((splitter >> 63) & Long.MAX_VALUE));  // the key's inverse
    }

    /**
     * {@link #partitionInPlace} of {@code a[from, to)} by {@code x < splitter} ({@code below}: those to the
     * front; else the others); returns the end of the front part. {@code ?:} of two constants compiles to a
     * conditional move, not a jump.
     */
    static int partitionDoubles(double[] a, int from, int to, double splitter, boolean below) {
        int kept = from;
        if (below) {
            for (int i = from; i < to; i++) {
                double x = a[i];
                a[i] = a[kept];
                a[kept] = x;
                kept += x < splitter ? 1 : 0;
            }
        } else {
            for (int i = from; i < to; i++) {
                double x = a[i];
                a[i] = a[kept];
                a[kept] = x;
                kept += x < splitter ? 0 : 1;
            }
        }
        return kept;
    }

    /** As {@link #partitionDoubles} for int64 values. */
    static int partitionLongs(long[] a, int from, int to, long splitter, boolean below) {
        int kept = from;
        if (below) {
            for (int i = from; i < to; i++) {
                long x = a[i];
                a[i] = a[kept];
                a[kept] = x;
                kept += x < splitter ? 1 : 0;
            }
        } else {
            for (int i = from; i < to; i++) {
                long x = a[i];
                a[i] = a[kept];
                a[kept] = x;
                kept += x < splitter ? 0 : 1;
            }
        }
        return kept;
    }

    /**
     * The partition pass of a worker that keeps its own partition, for any number of partitions: moves the
     * words of partition {@code own} to the front of {@code words} (in input order) and copies every other word
     * into {@code out[p]} of its partition (sized by {@link #count}; {@code out[own]} is not used), each word
     * written once. Returns how many words were kept.
     */
    public static long scatterKeeping(SortData type, MemorySegment words, long[] splitters, int own,
                                      MemorySegment[] out) {
        int partitions = splitters.length + 1;
        long[] tree = searchTree(splitters);
        long[] next = new long[partitions];
        long n = words.byteSize() / Long.BYTES;
        long kept = 0;
        for (long i = 0; i < n; i++) {
            long w = words.getAtIndex(ValueLayout.JAVA_LONG, i);
            int p = classify(type.key(w), tree, partitions);
            if (p == own) {
                words.setAtIndex(ValueLayout.JAVA_LONG, kept++, w);  // kept <= i: never a word not yet read
            } else {
                out[p].setAtIndex(ValueLayout.JAVA_LONG, next[p]++, w);
            }
        }
        return kept;
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

    /**
     * Appends the slices behind the first {@code keptBytes} of {@code work} (the worker's own part, which
     * stayed there) and returns the whole partition, ready for {@link #sortInPlace}; when it does not fit, a
     * new array gets the kept part and the slices.
     */
    public static MemorySegment gatherAfter(SortData type, MemorySegment work, long keptBytes,
                                            List<MemorySegment> slices) {
        long bytes = keptBytes;
        for (MemorySegment s : slices) {
            bytes += s.byteSize();
        }
        MemorySegment out = work;
        if (bytes > work.byteSize()) {
            out = newArray(type, bytes / Long.BYTES);
            MemorySegment.copy(work, 0, out, 0, keptBytes);
        }
        long at = keptBytes;
        for (MemorySegment s : slices) {
            MemorySegment.copy(s, 0, out, at, s.byteSize());
            at += s.byteSize();
        }
        return out.asSlice(0, bytes);
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
