package dev.depot.bench.sort;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The bucketed local sort ({@link FineBuckets}): buckets in sort order, whatever the values, and Arrays.sort's result. */
class FineBucketsTest {
    private static final long[] SPECIAL_DOUBLES = {Double.doubleToRawLongBits(Double.NaN), 0xfff8_0000_0000_0001L,
        0x7ff0_0000_0000_0001L, Double.doubleToRawLongBits(-0.0), Double.doubleToRawLongBits(0.0),
        Double.doubleToRawLongBits(Double.POSITIVE_INFINITY), Double.doubleToRawLongBits(Double.NEGATIVE_INFINITY),
        Double.doubleToRawLongBits(Double.MIN_VALUE), Double.doubleToRawLongBits(-Double.MIN_VALUE),
        Double.doubleToRawLongBits(Double.MAX_VALUE), Double.doubleToRawLongBits(-Double.MAX_VALUE),
        Double.doubleToRawLongBits(1.0)};
    private static final long[] SPECIAL_LONGS = {Long.MIN_VALUE, Long.MIN_VALUE + 1, Long.MAX_VALUE,
        Long.MAX_VALUE - 1, 0, -1, 1, 1L << 53, (1L << 53) + 1};

    /** Words of the type: mostly ordinary values of a narrow or wide range, some special ones. */
    private static long[] words(SortData type, int n, long seed, boolean wide) {
        SplittableRandom rnd = new SplittableRandom(seed);
        long[] out = new long[n];
        for (int i = 0; i < n; i++) {
            if (rnd.nextInt(4) == 0) {
                long[] special = type == SortData.FLOAT64 ? SPECIAL_DOUBLES : SPECIAL_LONGS;
                out[i] = special[rnd.nextInt(special.length)];
            } else if (type == SortData.FLOAT64) {
                out[i] = Double.doubleToRawLongBits(wide ? rnd.nextDouble(-1e300, 1e300) * Math.pow(10, -rnd.nextInt(300))
                    : rnd.nextInt(200) - 100.5);
            } else {
                out[i] = wide ? rnd.nextLong() : rnd.nextLong(-1000, 1000);
            }
        }
        return out;
    }

    private static MemorySegment heap(SortData type, long[] words) {
        MemorySegment seg = SampleSort.newArray(type, words.length);
        MemorySegment.copy(MemorySegment.ofArray(words), 0, seg, 0, (long) words.length * Long.BYTES);
        return seg;
    }

    private static long[] keys(SortData type, MemorySegment words) {
        long[] k = words.toArray(ValueLayout.JAVA_LONG);
        for (int i = 0; i < k.length; i++) {
            k[i] = type.key(k[i]);
        }
        return k;
    }

    /** The buckets for the words (sampled from them) over {@code partitions}. */
    private static FineBuckets bucketsFor(SortData type, long[] words, int partitions, int perPartition) {
        return FineBuckets.of(type, SampleSort.sampleKeys(type, heap(type, words), 256, 5), partitions, perPartition);
    }

    @ParameterizedTest
    @ValueSource(strings = {"FLOAT64", "INT64"})
    void shouldNeverPutAValueInALaterBucketThanOneThatSortsAfterIt(String name) {
        SortData type = SortData.valueOf(name);
        for (boolean wide : new boolean[] {false, true}) {
            for (int partitions : new int[] {1, 2, 3, 5}) {
                long[] w = words(type, 4000, partitions, wide);
                FineBuckets b = bucketsFor(type, w, partitions, 37);
                long[] sorted = w.clone();  // the keys, in order
                for (int i = 0; i < sorted.length; i++) {
                    sorted[i] = type.key(sorted[i]);
                }
                Arrays.sort(sorted);
                int previous = 0;
                for (long k : sorted) {
                    long word = type == SortData.FLOAT64 ? Double.doubleToRawLongBits(FineBuckets.valueOfKey(type, k)) : k;
                    int bucket = b.bucketOf(word);
                    assertTrue(bucket >= previous && bucket < b.buckets(), name + " key " + k + " in bucket " + bucket
                        + " after " + previous);
                    previous = bucket;
                }
            }
        }
    }

    @Test
    void shouldPutNanOfAnyPayloadInTheLastBucketAndBothZerosTogether() {
        long[] w = words(SortData.FLOAT64, 2000, 3, false);
        FineBuckets b = bucketsFor(SortData.FLOAT64, w, 2, 64);
        for (long nan : new long[] {Double.doubleToRawLongBits(Double.NaN), 0xfff8_0000_0000_0001L, 0x7ff0_0000_0000_0001L}) {
            assertEquals(b.buckets() - 1, b.bucketOf(nan));
        }
        assertTrue(b.bucketOf(Double.doubleToRawLongBits(-0.0)) <= b.bucketOf(Double.doubleToRawLongBits(0.0)));
        assertEquals(0, b.bucketOf(Double.doubleToRawLongBits(Double.NEGATIVE_INFINITY)));
    }

    /**
     * The workers' path, in one process: each map counts and scatters its share into one object of all buckets;
     * each reducer copies its partition's buckets from every map and sorts them; the partitions in order are
     * Arrays.sort's result, every payload kept.
     */
    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 5})
    void shouldSortAsArraysSortThroughBucketsOfEveryMap(int workers) {
        for (SortData type : SortData.values()) {
            for (boolean wide : new boolean[] {false, true}) {
                SplittableRandom rnd = new SplittableRandom(workers);
                long[][] shares = new long[workers][];
                for (int m = 0; m < workers; m++) {
                    shares[m] = words(type, rnd.nextInt(0, 3000), m * 31L + workers, wide);
                }
                assertSortsAsArraysSort(type, shares, rnd.nextInt(1, 50));
            }
        }
    }

    @Test
    void shouldSortAllEqualValuesAndTinyInputs() {
        long[][] cases = {{}, {7}, {7, 7}, {3, -3}, new long[1000]};
        for (long[] c : cases) {
            for (int workers : new int[] {1, 2, 3}) {
                for (SortData type : SortData.values()) {
                    long[][] shares = new long[workers][];
                    for (int m = 0; m < workers; m++) {
                        shares[m] = m == 0 ? c : c.length > 1 ? Arrays.copyOf(c, c.length / 2) : new long[0];
                    }
                    assertSortsAsArraysSort(type, shares, 16);
                }
            }
        }
        long nan = Double.doubleToRawLongBits(Double.NaN);
        long[] nans = {nan, 0xfff8_0000_0000_0001L, nan, Double.doubleToRawLongBits(-0.0), Double.doubleToRawLongBits(0.0)};
        assertSortsAsArraysSort(SortData.FLOAT64, new long[][] {nans, {nan, nan}}, 8);
        long[] infinities = {Double.doubleToRawLongBits(Double.POSITIVE_INFINITY), Double.doubleToRawLongBits(Double.NEGATIVE_INFINITY)};
        assertSortsAsArraysSort(SortData.FLOAT64, new long[][] {infinities, infinities}, 8);
        assertSortsAsArraysSort(SortData.INT64, new long[][] {SPECIAL_LONGS, {Long.MAX_VALUE, Long.MIN_VALUE}}, 8);
    }

    @Test
    void shouldFindEachBucketsStartInASliceByBinarySearch() {
        long[] w = words(SortData.FLOAT64, 3000, 17, false);
        FineBuckets b = bucketsFor(SortData.FLOAT64, w, 2, 40);
        MemorySegment in = heap(SortData.FLOAT64, w);
        long[] counts = b.count(in);
        MemorySegment all = MemorySegment.ofArray(new long[w.length]);
        b.scatter(in, counts, all);
        long[] bytes = b.partitionBytes(counts);
        long at = 0;
        for (int p = 0; p < 2; p++) {
            long[] starts = b.starts(all.asSlice(at, bytes[p]), p);
            assertEquals(b.firstBucket(p + 1) - b.firstBucket(p) + 1, starts.length);
            for (int i = 0; i + 1 < starts.length; i++) {
                assertEquals(counts[b.firstBucket(p) + i], starts[i + 1] - starts[i], "bucket " + i + " of " + p);
            }
            at += bytes[p];
        }
    }

    @Test
    void shouldGatherIntoANewArrayWhenThePartitionOutgrowsTheWorkArray() {
        long[] w = words(SortData.INT64, 500, 2, true);
        FineBuckets b = bucketsFor(SortData.INT64, w, 1, 8);
        MemorySegment in = heap(SortData.INT64, w);
        MemorySegment all = MemorySegment.ofArray(new long[w.length]);
        b.scatter(in, b.count(in), all);
        MemorySegment got = b.gatherSorted(0, List.of(all), SampleSort.newArray(SortData.INT64, 10));
        long[] expected = w.clone();
        Arrays.sort(expected);
        assertArrayEquals(expected, got.toArray(ValueLayout.JAVA_LONG));
    }

    @Test
    void shouldGiveEachPartitionAnEqualShareOfUniformValuesToWithinABucket() {
        SplittableRandom rnd = new SplittableRandom(4);
        long[] w = new long[200_000];
        for (int i = 0; i < w.length; i++) {
            w[i] = Double.doubleToRawLongBits((rnd.nextDouble() - 0.5) * 2e9);
        }
        for (int partitions : new int[] {2, 3, 5}) {
            FineBuckets b = FineBuckets.of(SortData.FLOAT64, SampleSort.sampleKeys(SortData.FLOAT64,
                heap(SortData.FLOAT64, w), 32_768, 1), partitions, 50);
            long[] bytes = b.partitionBytes(b.count(heap(SortData.FLOAT64, w)));
            for (long p : bytes) {
                assertEquals(w.length / partitions, p / Long.BYTES, w.length * 0.02, partitions + " partitions: "
                    + Arrays.toString(bytes));
            }
        }
    }

    @Test
    void shouldAimAtCacheSizedBucketsAndKeepAtLeastOne() {
        assertEquals(FineBuckets.MIN_PER_PARTITION, FineBuckets.perPartition(10, 2));
        assertEquals(100_000_000 / 2 / FineBuckets.TARGET_VALUES, FineBuckets.perPartition(100_000_000, 2));
        assertEquals(FineBuckets.MAX_PER_PARTITION, FineBuckets.perPartition(Long.MAX_VALUE / 2, 1));
    }

    /** Maps scatter their shares into native objects (as in the store), reducers gather and sort: Arrays.sort's order. */
    private static void assertSortsAsArraysSort(SortData type, long[][] shares, int perPartition) {
        int workers = shares.length;
        List<Long> everything = new ArrayList<>();
        List<long[]> samples = new ArrayList<>();
        for (int m = 0; m < workers; m++) {
            for (long x : shares[m]) {
                everything.add(x);
            }
            samples.add(SampleSort.sampleKeys(type, heap(type, shares[m]), 64, m));
        }
        long[] allSamples = samples.stream().flatMapToLong(Arrays::stream).toArray();
        FineBuckets b = FineBuckets.of(type, allSamples, workers, perPartition);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment[][] slices = new MemorySegment[workers][workers];
            for (int m = 0; m < workers; m++) {
                MemorySegment in = heap(type, shares[m]);
                long[] counts = b.count(in);
                MemorySegment object = arena.allocate(Math.max(1, in.byteSize()), Long.BYTES);
                b.scatter(in, counts, object);
                long[] bytes = b.partitionBytes(counts);
                long at = 0;
                for (int p = 0; p < workers; p++) {
                    slices[m][p] = object.asSlice(at, bytes[p]);
                    at += bytes[p];
                }
            }
            List<MemorySegment> sorted = new ArrayList<>();
            for (int p = 0; p < workers; p++) {
                List<MemorySegment> incoming = new ArrayList<>();
                for (int m = 0; m < workers; m++) {
                    incoming.add(slices[m][p]);
                }
                sorted.add(b.gatherSorted(p, incoming, SampleSort.newArray(type, 4000)));
            }
            MemorySegment got = SampleSort.gather(type, sorted);
            long[] expected = everything.stream().mapToLong(Long::longValue).toArray();
            MemorySegment want = heap(type, expected);
            SampleSort.sortInPlace(want);
            // NaNs of different payloads may come in any order among themselves (Double.compare: all equal): keys
            // compare them as one, the checksum of the raw bits shows every payload is kept.
            assertArrayEquals(keys(type, want), keys(type, got), type + " in Arrays.sort's order");
            assertEquals(SampleSort.checksum(want), SampleSort.checksum(got));
        }
    }
}
