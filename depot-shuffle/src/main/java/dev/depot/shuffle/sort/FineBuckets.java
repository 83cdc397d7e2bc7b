package dev.depot.shuffle.sort;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.List;

/**
 * The fine buckets of the bucketed local sort: each of the {@code partitions} (cut by the splitter keys, one per
 * worker) is cut again into {@link #perPartition} buckets of about {@link #TARGET_VALUES} values, small enough
 * for one core's L2 cache. A worker's partition pass writes every value once into its bucket (buckets of every
 * partition in order, the map's object of the shuffle); the reducer of a partition then copies each bucket's
 * parts from every map into its work array and sorts it with {@code Arrays.sort} at once, while it is in the
 * cache: many small sorts instead of one big one, {@code n log(n/B)} instead of {@code n log n}, and the core's
 * memory traffic is one copy in and out instead of every pass of a sort over the whole partition (the two
 * workers' big sorts slowed each other by sharing the memory bandwidth).
 *
 * <p>Inside a partition the bucket is a linear map of the value, {@code (x - low) * scale} truncated and clamped
 * to the partition's buckets, with {@code low} and {@code scale} from the finite samples of the partition, and NaN
 * in the last bucket: no comparison against a table of splitters, which cost 10 to 30 ns a value here where this
 * costs 1 to 2 (the comparisons form a chain of dependent loads). The map is monotone: a value that sorts before
 * another is never in a later bucket, whatever the data; on values that are far from uniform inside a partition
 * the buckets are uneven and the sorts of the big ones take longer, never the order.
 */
public final class FineBuckets {
    /** Values per bucket aimed at: 512 KiB of 8-byte values, half of a Zen 5 core's L2. */
    public static final int TARGET_VALUES = 1 << 16;
    /** At most this many buckets per partition (the counters stay small). */
    public static final int MAX_PER_PARTITION = 1 << 14;

    private final SortData type;
    private final int partitions;
    private final int perPartition;
    private final long[] tree;
    private final double[] low;
    private final double[] scale;

    private FineBuckets(SortData type, int partitions, int perPartition, long[] tree, double[] low, double[] scale) {
        this.type = type;
        this.partitions = partitions;
        this.perPartition = perPartition;
        this.tree = tree;
        this.low = low;
        this.scale = scale;
    }

    /** Buckets per partition for {@code count} values over {@code partitions}: about {@link #TARGET_VALUES} each. */
    public static int perPartition(long count, int partitions) {
        long per = count / Math.max(1, partitions) / TARGET_VALUES;
        return (int) Math.max(1, Math.min(MAX_PER_PARTITION, per));
    }

    /**
     * The buckets of {@code splitters} (as {@link SampleSort#splitters} chose them from {@code sampleKeys}), each
     * partition cut into {@code perPartition} buckets spread over its finite samples' range.
     */
    public static FineBuckets of(SortData type, long[] sampleKeys, long[] splitters, int perPartition) {
        if (perPartition < 1) {
            throw new IllegalArgumentException("perPartition must be >= 1, got " + perPartition);
        }
        int partitions = splitters.length + 1;
        long[] tree = SampleSort.searchTree(splitters);
        double[] lo = new double[partitions];
        double[] hi = new double[partitions];
        Arrays.fill(lo, Double.POSITIVE_INFINITY);
        Arrays.fill(hi, Double.NEGATIVE_INFINITY);
        for (long k : sampleKeys) {
            double v = valueOfKey(type, k);
            if (Double.isFinite(v)) {
                int p = SampleSort.classify(k, tree, partitions);
                lo[p] = Math.min(lo[p], v);
                hi[p] = Math.max(hi[p], v);
            }
        }
        double[] scale = new double[partitions];
        for (int p = 0; p < partitions; p++) {
            double width = hi[p] - lo[p];
            if (width > 0 && Double.isFinite(width)) {
                scale[p] = perPartition / width;
            } else {  // no or one finite sample: the partition is one bucket (NaN still goes last)
                lo[p] = 0;
                scale[p] = 0;
            }
        }
        return new FineBuckets(type, partitions, perPartition, tree, lo, scale);
    }

    /** The value of a key as a double: a float64's own value (NaN for NaN's key), an int64's nearest double. */
    static double valueOfKey(SortData type, long key) {
        if (type == SortData.FLOAT64) {
            return Double.longBitsToDouble(key ^ ((key >> 63) & Long.MAX_VALUE));  // the inverse of floatKey
        }
        return key;
    }

    public int partitions() {
        return partitions;
    }

    public int perPartition() {
        return perPartition;
    }

    /** All buckets: {@code partitions() * perPartition()}, partition p's are {@code [p*B, (p+1)*B)}. */
    public int buckets() {
        return partitions * perPartition;
    }

    /** The bucket of the word {@code word} (raw bits of a value of the type). */
    public int bucketOf(long word) {
        long key = type.key(word);
        int p = SampleSort.classify(key, tree, partitions);
        double x = type == SortData.FLOAT64 ? Double.longBitsToDouble(word) : (double) word;
        return p * perPartition + digit(x, p);
    }

    /** The bucket inside partition {@code p}: monotone in {@code x}, NaN last. */
    private int digit(double x, int p) {
        int d = (int) ((x - low[p]) * scale[p]);  // (int) truncates; NaN gives 0, +-infinity the int extremes
        d = Math.min(Math.max(d, 0), perPartition - 1);
        return x != x ? perPartition - 1 : d;
    }

    /** How many words of {@code words} (a heap segment over a {@code double[]} or {@code long[]}) fall in each bucket. */
    public long[] count(MemorySegment words) {
        long[] counts = new long[buckets()];
        Object base = words.heapBase().orElse(null);
        int from = (int) (words.address() / Long.BYTES);
        int to = from + (int) (words.byteSize() / Long.BYTES);
        if (base instanceof double[] a) {
            for (int i = from; i < to; i++) {
                double x = a[i];
                int p = SampleSort.classify(SortData.floatKey(Double.doubleToRawLongBits(x)), tree, partitions);
                counts[p * perPartition + digit(x, p)]++;
            }
        } else if (base instanceof long[] a) {
            for (int i = from; i < to; i++) {
                long w = a[i];
                int p = SampleSort.classify(w, tree, partitions);
                counts[p * perPartition + digit(w, p)]++;
            }
        } else {
            long n = words.byteSize() / Long.BYTES;
            for (long i = 0; i < n; i++) {
                counts[bucketOf(words.getAtIndex(ValueLayout.JAVA_LONG, i))]++;
            }
        }
        return counts;
    }

    /**
     * Copies every word of {@code words} once into {@code out}, where bucket {@code b} starts after the
     * {@code counts} of the buckets before it: every bucket of partition 0, then of partition 1, ... (the slices
     * of a map's object of layout PER_MAP, each sorted by bucket). Within a bucket the words keep their input order.
     */
    public void scatter(MemorySegment words, long[] counts, MemorySegment out) {
        long[] next = new long[buckets()];
        long total = 0;
        for (int b = 0; b < next.length; b++) {
            next[b] = total;
            total += counts[b];
        }
        long n = words.byteSize() / Long.BYTES;
        if (total != n || n > out.byteSize() / Long.BYTES) {
            throw new IllegalArgumentException(n + " words, counted " + total + ", into " + out.byteSize() + " bytes");
        }
        Object base = words.heapBase().orElse(null);
        int from = (int) (words.address() / Long.BYTES);
        int to = from + (int) n;
        if (base instanceof double[] a) {
            for (int i = from; i < to; i++) {
                double x = a[i];
                long w = Double.doubleToRawLongBits(x);
                int p = SampleSort.classify(SortData.floatKey(w), tree, partitions);
                out.setAtIndex(ValueLayout.JAVA_LONG, next[p * perPartition + digit(x, p)]++, w);
            }
        } else if (base instanceof long[] a) {
            for (int i = from; i < to; i++) {
                long w = a[i];
                int p = SampleSort.classify(w, tree, partitions);
                out.setAtIndex(ValueLayout.JAVA_LONG, next[p * perPartition + digit(w, p)]++, w);
            }
        } else {
            for (long i = 0; i < n; i++) {
                long w = words.getAtIndex(ValueLayout.JAVA_LONG, i);
                out.setAtIndex(ValueLayout.JAVA_LONG, next[bucketOf(w)]++, w);
            }
        }
    }

    /**
     * Where each bucket of partition {@code partition} starts in {@code slice} (words of that partition in bucket
     * order, as {@link #scatter} wrote them): {@code perPartition() + 1} word offsets, the last the slice's
     * length. Found by binary search, so a reducer needs no counts from the maps.
     */
    public long[] starts(MemorySegment slice, int partition) {
        long n = slice.byteSize() / Long.BYTES;
        long[] starts = new long[perPartition + 1];
        int first = partition * perPartition;
        for (int b = 1; b < perPartition; b++) {
            long lo = starts[b - 1];  // the first word whose bucket is >= first + b
            long hi = n;
            while (lo < hi) {
                long mid = (lo + hi) >>> 1;
                if (bucketOf(slice.getAtIndex(ValueLayout.JAVA_LONG, mid)) < first + b) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            starts[b] = lo;
        }
        starts[perPartition] = n;
        return starts;
    }

    /**
     * The reducer's step: copies partition {@code partition}'s slices (one per map, each in bucket order), bucket by
     * bucket, into {@code work} (a heap segment {@link SampleSort#newArray} made; a new one when they do not fit)
     * and sorts each bucket right after its copy, while it is in the cache. Returns the sorted partition.
     */
    public MemorySegment gatherSorted(int partition, List<MemorySegment> slices, MemorySegment work) {
        long bytes = 0;
        long[][] starts = new long[slices.size()][];
        for (int m = 0; m < slices.size(); m++) {
            bytes += slices.get(m).byteSize();
            starts[m] = starts(slices.get(m), partition);
        }
        MemorySegment out = bytes <= work.byteSize() ? work.asSlice(0, bytes) : SampleSort.newArray(type, bytes / Long.BYTES);
        long at = 0;
        for (int b = 0; b < perPartition; b++) {
            long bucketStart = at;
            for (int m = 0; m < slices.size(); m++) {
                long len = (starts[m][b + 1] - starts[m][b]) * Long.BYTES;
                MemorySegment.copy(slices.get(m), starts[m][b] * Long.BYTES, out, at, len);
                at += len;
            }
            if (at - bucketStart > Long.BYTES) {
                SampleSort.sortInPlace(out.asSlice(bucketStart, at - bucketStart));
            }
        }
        return out;
    }
}
