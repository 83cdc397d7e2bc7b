package dev.depot.bench.sort;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.List;

/**
 * The fine buckets of the bucketed local sort: the values' range is cut into {@link #buckets} buckets of about
 * {@link #TARGET_VALUES} values, small enough for one core's L2 cache, and each worker's partition is a run of
 * consecutive buckets. A worker's partition pass writes every value once into its bucket (the buckets in order,
 * the map's object of the shuffle, whose slice of partition p is p's buckets); the reducer of a partition then
 * copies each bucket's parts from every map into its work array and sorts it with {@code Arrays.sort} at once,
 * while it is in the cache: many small sorts instead of one big one, {@code n log(n/B)} instead of
 * {@code n log n}, and the core's memory traffic is one copy in and out instead of every pass of a sort over the
 * whole partition (the two workers' big sorts slowed each other by sharing the memory bandwidth).
 *
 * <p>The bucket is a linear map of the value, {@code (x - low) * scale} truncated and clamped, with {@code low}
 * and {@code scale} from the finite samples' range, and NaN in the last bucket: no comparison per value at all.
 * A search of a table of splitters cost 10 to 30 ns a value here, a comparison with the one splitter of two
 * partitions a mispredicted branch for every other value (0.6 s of 5*10^7), this 2 ns. The map is monotone: a
 * value that sorts before another is never in a later bucket, whatever the data. The partitions' bounds are
 * buckets chosen so that each partition gets the same share of the samples, so they are balanced to within a
 * bucket and the samples' rank error. On values far from uniform over their range the buckets are uneven and
 * the sorts of the big ones take longer (and the partitions are balanced only to within their size), never
 * the order.
 */
public final class FineBuckets {
    /** Values per bucket aimed at: 512 KiB of 8-byte values, half of a Zen 5 core's L2. */
    public static final int TARGET_VALUES = 1 << 16;
    /** At most this many buckets per partition (the counters stay small). */
    public static final int MAX_PER_PARTITION = 1 << 14;
    /**
     * At least this many buckets per partition, however few the values: the partitions' bounds are buckets, so
     * this is how finely they can balance the workers (small buckets cost a call of {@code Arrays.sort} each).
     */
    public static final int MIN_PER_PARTITION = 256;

    private final SortData type;
    private final int buckets;
    /** Partition p is buckets {@code [first[p], first[p + 1])}. */
    private final int[] first;
    private final double low;
    private final double scale;

    private FineBuckets(SortData type, int buckets, int[] first, double low, double scale) {
        this.type = type;
        this.buckets = buckets;
        this.first = first;
        this.low = low;
        this.scale = scale;
    }

    /**
     * Buckets per partition for {@code count} values over {@code partitions}: about {@link #TARGET_VALUES} each,
     * at least {@link #MIN_PER_PARTITION}.
     */
    public static int perPartition(long count, int partitions) {
        long per = count / Math.max(1, partitions) / TARGET_VALUES;
        return (int) Math.max(MIN_PER_PARTITION, Math.min(MAX_PER_PARTITION, per));
    }

    /**
     * {@code partitions * perPartition} buckets over the range of the finite values of {@code sampleKeys} (keys
     * of the type, all workers' samples), and the partitions' bounds between them, each partition getting an
     * equal share of the samples.
     */
    public static FineBuckets of(SortData type, long[] sampleKeys, int partitions, int perPartition) {
        if (perPartition < 1 || partitions < 1) {
            throw new IllegalArgumentException("partitions and perPartition must be >= 1, got " + partitions + " and "
                + perPartition);
        }
        int buckets = Math.multiplyExact(partitions, perPartition);
        double lo = Double.POSITIVE_INFINITY;
        double hi = Double.NEGATIVE_INFINITY;
        for (long k : sampleKeys) {
            double v = valueOfKey(type, k);
            if (Double.isFinite(v)) {
                lo = Math.min(lo, v);
                hi = Math.max(hi, v);
            }
        }
        double width = hi - lo;
        double scale = width > 0 && Double.isFinite(width) ? buckets / width : 0;
        if (scale == 0) {  // no or one finite value among the samples: every value but NaN in bucket 0
            lo = 0;
        }
        FineBuckets unsplit = new FineBuckets(type, buckets, new int[] {0, buckets}, lo, scale);
        int[] histogram = new int[buckets + 1];
        for (long k : sampleKeys) {
            long word = type == SortData.FLOAT64 ? Double.doubleToRawLongBits(valueOfKey(type, k)) : k;
            histogram[unsplit.bucketOf(word) + 1]++;
        }
        for (int b = 1; b <= buckets; b++) {
            histogram[b] += histogram[b - 1];  // now: samples in the buckets before b
        }
        int[] first = new int[partitions + 1];
        first[partitions] = buckets;
        int b = 0;
        for (int p = 1; p < partitions; p++) {
            long wanted = (long) sampleKeys.length * p / partitions;
            while (b < buckets && histogram[b] < wanted) {
                b++;
            }
            // the bound nearer to the wanted share: before bucket b - 1 or before b
            first[p] = b > first[p - 1] && wanted - histogram[b - 1] < histogram[b] - wanted ? b - 1 : b;
        }
        return new FineBuckets(type, buckets, first, lo, scale);
    }

    /** The value of a key as a double: a float64's own value (NaN for NaN's key), an int64's nearest double. */
    static double valueOfKey(SortData type, long key) {
        if (type == SortData.FLOAT64) {
            return Double.longBitsToDouble(key ^ ((key >> 63) & Long.MAX_VALUE));  // the inverse of floatKey
        }
        return key;
    }

    public int partitions() {
        return first.length - 1;
    }

    /** All buckets; partition p's are {@code [firstBucket(p), firstBucket(p + 1))}. */
    public int buckets() {
        return buckets;
    }

    public int firstBucket(int partition) {
        return first[partition];
    }

    /** The bucket of the word {@code word} (raw bits of a value of the type). */
    public int bucketOf(long word) {
        return bucket(type == SortData.FLOAT64 ? Double.longBitsToDouble(word) : (double) word);
    }

    /** Monotone in {@code x} (int64 values as their nearest doubles: rounding is monotone too), NaN last. */
    private int bucket(double x) {
        int b = (int) ((x - low) * scale);  // (int) truncates; NaN gives 0, +-infinity the int extremes
        b = Math.min(Math.max(b, 0), buckets - 1);
        return x != x ? buckets - 1 : b;
    }

    /** The partition of bucket {@code bucket}. */
    public int partitionOfBucket(int bucket) {
        int p = 0;
        while (first[p + 1] <= bucket) {
            p++;
        }
        return p;
    }

    /** The words of each partition, in bytes, from the buckets' {@code counts}. */
    public long[] partitionBytes(long[] counts) {
        long[] bytes = new long[partitions()];
        for (int p = 0; p < bytes.length; p++) {
            for (int b = first[p]; b < first[p + 1]; b++) {
                bytes[p] += counts[b] * Long.BYTES;
            }
        }
        return bytes;
    }

    /** How many words of {@code words} (a heap segment over a {@code double[]} or {@code long[]}) fall in each bucket. */
    public long[] count(MemorySegment words) {
        long[] counts = new long[buckets];
        Object base = words.heapBase().orElse(null);
        int from = (int) (words.address() / Long.BYTES);
        int to = from + (int) (words.byteSize() / Long.BYTES);
        if (base instanceof double[] a) {
            for (int i = from; i < to; i++) {
                counts[bucket(a[i])]++;
            }
        } else if (base instanceof long[] a) {
            for (int i = from; i < to; i++) {
                counts[bucket(a[i])]++;
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
     * {@code counts} of the buckets before it: the buckets in order, so partition 0's, then partition 1's, ...
     * (the slices of a map's object of layout PER_MAP). Within a bucket the words keep their input order.
     */
    public void scatter(MemorySegment words, long[] counts, MemorySegment out) {
        long[] next = new long[buckets];
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
                out.setAtIndex(ValueLayout.JAVA_LONG, next[bucket(x)]++, Double.doubleToRawLongBits(x));
            }
        } else if (base instanceof long[] a) {
            for (int i = from; i < to; i++) {
                long w = a[i];
                out.setAtIndex(ValueLayout.JAVA_LONG, next[bucket(w)]++, w);
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
     * order, as {@link #scatter} wrote them): one word offset per bucket of the partition and then the slice's
     * length. Found by binary search, so a reducer needs no counts from the maps.
     */
    public long[] starts(MemorySegment slice, int partition) {
        long n = slice.byteSize() / Long.BYTES;
        int count = first[partition + 1] - first[partition];
        long[] starts = new long[count + 1];
        int firstBucket = first[partition];
        for (int b = 1; b < count; b++) {
            long lo = starts[b - 1];  // the first word whose bucket is >= first + b
            long hi = n;
            while (lo < hi) {
                long mid = (lo + hi) >>> 1;
                if (bucketOf(slice.getAtIndex(ValueLayout.JAVA_LONG, mid)) < firstBucket + b) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            starts[b] = lo;
        }
        starts[count] = n;
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
        for (int b = 0; b < first[partition + 1] - first[partition]; b++) {
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
