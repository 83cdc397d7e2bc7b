package dev.depot.bench.sort;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The sample sort's steps give Arrays.sort's order, with duplicates, NaNs (any payload) and ±0.0. */
class SampleSortTest {
    private static final double[] SPECIAL = {Double.NaN, Double.longBitsToDouble(0xfff8_0000_0000_0001L), -0.0, 0.0,
        Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, Double.MIN_VALUE, -Double.MIN_VALUE, 1.0, 1.0, -1.0};

    /** Sorts by splitting into {@code partitions}, sorting each and concatenating, as the workers do. */
    private static MemorySegment sampleSort(SortData type, MemorySegment input, int partitions) {
        long[] splitters = SampleSort.splitters(SampleSort.sampleKeys(type, input, 64, 3), partitions);
        long[] counts = SampleSort.count(type, input, splitters);
        MemorySegment all = MemorySegment.ofArray(new long[(int) (input.byteSize() / Long.BYTES)]);
        if (partitions == 2) {  // the workers' kernel for two
            assertEquals(counts[0], SampleSort.splitInTwo(type, input, splitters[0], all));
        } else {
            SampleSort.scatter(type, input, splitters, counts, all);
        }
        MemorySegment[] out = new MemorySegment[partitions];
        long at = 0;
        for (int p = 0; p < partitions; p++) {
            out[p] = all.asSlice(at, counts[p] * Long.BYTES);
            at += counts[p] * Long.BYTES;
        }
        List<MemorySegment> sorted = new ArrayList<>();
        for (MemorySegment o : out) {
            MemorySegment part = SampleSort.gather(type, List.of(o));
            SampleSort.sortInPlace(part);
            sorted.add(part);
        }
        return SampleSort.gather(type, sorted);
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 7, 16})
    void shouldSortDoublesExactlyAsArraysSortDoesWithNanAndSignedZeros(int partitions) {
        SplittableRandom rnd = new SplittableRandom(partitions);
        double[] input = new double[5000];
        for (int i = 0; i < input.length; i++) {
            input[i] = rnd.nextInt(3) == 0 ? SPECIAL[rnd.nextInt(SPECIAL.length)] : rnd.nextInt(50) - 25.0;
        }
        double[] expected = input.clone();
        Arrays.sort(expected);
        MemorySegment got = sampleSort(SortData.FLOAT64, MemorySegment.ofArray(input), partitions);
        // Keys are the bits for every value but NaNs, which all get NaN's one key: so this is bit for bit (-0.0
        // before 0.0) but for the order of NaNs of different payloads among themselves, which Double.compare
        // (all NaNs equal) leaves open; the checksum of the raw bits shows every payload is still there.
        assertArrayEquals(keys(MemorySegment.ofArray(expected)), keys(got), "Arrays.sort's order");
        assertEquals(-1, SampleSort.firstDisorder(SortData.FLOAT64, got));
        assertEquals(SampleSort.checksum(MemorySegment.ofArray(input)), SampleSort.checksum(got));
    }

    private static long[] keys(MemorySegment words) {
        long[] k = words.toArray(ValueLayout.JAVA_LONG);
        for (int i = 0; i < k.length; i++) {
            k[i] = SortData.FLOAT64.key(k[i]);
        }
        return k;
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 5})
    void shouldSortLongsWithDuplicatesAndExtremes(int partitions) {
        SplittableRandom rnd = new SplittableRandom(9);
        long[] input = new long[3000];
        for (int i = 0; i < input.length; i++) {
            input[i] = i % 5 == 0 ? SortData.INT64.special(i) : rnd.nextLong(-100, 100);
        }
        long[] expected = input.clone();
        Arrays.sort(expected);
        assertArrayEquals(expected, sampleSort(SortData.INT64, MemorySegment.ofArray(input), partitions)
            .toArray(ValueLayout.JAVA_LONG));
    }

    @Test
    void shouldOrderKeysAsDoubleCompare() {
        for (double a : SPECIAL) {
            for (double b : SPECIAL) {
                long ka = SortData.FLOAT64.key(Double.doubleToRawLongBits(a));
                long kb = SortData.FLOAT64.key(Double.doubleToRawLongBits(b));
                assertEquals(Integer.signum(Double.compare(a, b)), Integer.signum(Long.compare(ka, kb)), a + " vs " + b);
            }
        }
    }

    @Test
    void shouldCompareWithoutABranchAsSignedLessThanAtTheExtremes() {
        long[] edge = {Long.MIN_VALUE, Long.MIN_VALUE + 1, -2, -1, 0, 1, 2, Long.MAX_VALUE - 1, Long.MAX_VALUE};
        SplittableRandom rnd = new SplittableRandom(4);
        long[] values = new long[edge.length + 200];
        System.arraycopy(edge, 0, values, 0, edge.length);
        for (int i = edge.length; i < values.length; i++) {
            values[i] = rnd.nextLong();
        }
        for (long a : values) {
            for (long b : values) {
                assertEquals(a < b ? -1 : 0, SampleSort.lessMask(a, b), a + " < " + b);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4, 5, 8, 9, 20})
    void shouldClassifyWithoutBranchesAsTheBinarySearchDoes(int partitions) {
        SplittableRandom rnd = new SplittableRandom(partitions);
        long[] samples = new long[64];
        for (int i = 0; i < samples.length; i++) {
            samples[i] = rnd.nextInt(4) == 0 ? SortData.INT64.special(i) : rnd.nextLong(-50, 50);
        }
        long[] splitters = SampleSort.splitters(samples, partitions);
        long[] tree = SampleSort.searchTree(splitters);
        for (int i = 0; i < 2000; i++) {
            long key = i % 3 == 0 ? SortData.INT64.special(i) : rnd.nextLong(-60, 60);
            assertEquals(SampleSort.partitionOf(key, splitters), SampleSort.classify(key, tree, partitions),
                key + " among " + Arrays.toString(splitters));
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3, 7})
    void shouldPartitionIntoOneMapObjectAsIntoSeparateSlices(int partitions) {
        SplittableRandom rnd = new SplittableRandom(11);
        double[] input = new double[3000];
        for (int i = 0; i < input.length; i++) {
            input[i] = rnd.nextInt(3) == 0 ? SPECIAL[rnd.nextInt(SPECIAL.length)] : rnd.nextInt(40) - 20.0;
        }
        MemorySegment words = MemorySegment.ofArray(input);
        long[] splitters = SampleSort.splitters(SampleSort.sampleKeys(SortData.FLOAT64, words, 64, 2), partitions);
        long[] counts = SampleSort.count(SortData.FLOAT64, words, splitters);
        MemorySegment[] separate = new MemorySegment[partitions];
        for (int p = 0; p < partitions; p++) {
            separate[p] = MemorySegment.ofArray(new long[(int) counts[p]]);
        }
        SampleSort.scatter(SortData.FLOAT64, words, splitters, separate);
        MemorySegment one = MemorySegment.ofArray(new long[input.length]);
        SampleSort.scatter(SortData.FLOAT64, words, splitters, counts, one);
        long at = 0;
        for (int p = 0; p < partitions; p++) {
            assertArrayEquals(separate[p].toArray(ValueLayout.JAVA_LONG),
                one.asSlice(at, counts[p] * Long.BYTES).toArray(ValueLayout.JAVA_LONG), "partition " + p);
            at += counts[p] * Long.BYTES;
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"FLOAT64", "INT64"})
    void shouldSplitInTwoWithTheLowerPartitionInFrontAndTheSameValuesAsTheGeneralPass(String name) {
        SortData type = SortData.valueOf(name);
        SplittableRandom rnd = new SplittableRandom(5);
        long[] input = new long[4001];
        for (int i = 0; i < input.length; i++) {
            input[i] = i % 4 == 0 ? type.special(i) : type == SortData.FLOAT64
                ? Double.doubleToRawLongBits(rnd.nextInt(30) - 15.0) : rnd.nextLong(-15, 15);
        }
        MemorySegment words = MemorySegment.ofArray(input);
        long[] splitters = SampleSort.splitters(SampleSort.sampleKeys(type, words, 64, 8), 2);
        long[] counts = SampleSort.count(type, words, splitters);
        MemorySegment out = MemorySegment.ofArray(new long[input.length]);
        long below = SampleSort.splitInTwo(type, words, splitters[0], out);
        assertEquals(counts[0], below);
        long[] front = out.asSlice(0, below * Long.BYTES).toArray(ValueLayout.JAVA_LONG);
        long[] back = out.asSlice(below * Long.BYTES).toArray(ValueLayout.JAVA_LONG);
        for (long w : front) {
            assertTrue(type.key(w) < splitters[0]);
        }
        for (long w : back) {
            assertTrue(type.key(w) >= splitters[0]);
        }
        assertEquals(SampleSort.checksum(words), SampleSort.checksum(out));
        assertEquals(input.length, front.length + back.length);
    }

    /**
     * The workers' path: each keeps its own partition in its array ({@link SampleSort#partitionInPlace} for two,
     * {@link SampleSort#scatterKeeping} for more) and appends the others' slices ({@link SampleSort#gatherAfter});
     * the sorted partitions, in order, are Arrays.sort's result.
     */
    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 5})
    void shouldSortAsArraysSortWhenEachWorkerKeepsItsOwnPartition(int workers) {
        SplittableRandom rnd = new SplittableRandom(workers + 40);
        double[][] chunks = new double[workers][];
        List<Double> everything = new ArrayList<>();
        for (int w = 0; w < workers; w++) {
            chunks[w] = new double[rnd.nextInt(0, 900)];
            for (int i = 0; i < chunks[w].length; i++) {
                chunks[w][i] = rnd.nextInt(3) == 0 ? SPECIAL[rnd.nextInt(SPECIAL.length)] : rnd.nextInt(40) - 20.0;
                everything.add(chunks[w][i]);
            }
        }
        double[] expected = everything.stream().mapToDouble(Double::doubleValue).toArray();
        Arrays.sort(expected);
        long[] samples = SampleSort.sampleKeys(SortData.FLOAT64, MemorySegment.ofArray(expected), 64, 1);
        long[] splitters = SampleSort.splitters(samples, workers);
        // map side: kept part at the front of each work array, the rest into slices [map][partition]
        MemorySegment[][] slices = new MemorySegment[workers][workers];
        long[] kept = new long[workers];
        MemorySegment[] work = new MemorySegment[workers];
        for (int w = 0; w < workers; w++) {
            work[w] = MemorySegment.ofArray(Arrays.copyOf(chunks[w], 1000));
            MemorySegment mine = work[w].asSlice(0, (long) chunks[w].length * Double.BYTES);
            if (workers == 2) {
                kept[w] = SampleSort.partitionInPlace(SortData.FLOAT64, mine, splitters[0], w);
                slices[w][1 - w] = mine.asSlice(kept[w] * Double.BYTES);
                slices[w][w] = MemorySegment.ofArray(new long[0]);
            } else {
                long[] counts = SampleSort.count(SortData.FLOAT64, mine, splitters);
                for (int p = 0; p < workers; p++) {
                    slices[w][p] = MemorySegment.ofArray(new long[p == w ? 0 : (int) counts[p]]);
                }
                kept[w] = SampleSort.scatterKeeping(SortData.FLOAT64, mine, splitters, w, slices[w]);
                assertEquals(counts[w], kept[w]);
            }
        }
        // reduce side: work arrays of the other maps' slices are copied before they are overwritten
        List<MemorySegment> sorted = new ArrayList<>();
        MemorySegment[][] copies = new MemorySegment[workers][workers];
        for (int m = 0; m < workers; m++) {
            for (int p = 0; p < workers; p++) {
                copies[m][p] = MemorySegment.ofArray(slices[m][p].toArray(ValueLayout.JAVA_LONG));
            }
        }
        for (int w = 0; w < workers; w++) {
            List<MemorySegment> incoming = new ArrayList<>();
            for (int m = 0; m < workers; m++) {
                incoming.add(copies[m][w]);
            }
            MemorySegment part = SampleSort.gatherAfter(SortData.FLOAT64, work[w], kept[w] * Double.BYTES, incoming);
            SampleSort.sortInPlace(part);
            sorted.add(part);
        }
        MemorySegment got = SampleSort.gather(SortData.FLOAT64, sorted);
        assertArrayEquals(keys(MemorySegment.ofArray(expected)), keys(got), "Arrays.sort's order");
        assertEquals(SampleSort.checksum(MemorySegment.ofArray(expected)), SampleSort.checksum(got));
    }

    /**
     * On the workers' arrays the two-way pass compares values, not keys ({@link SampleSort#plainSplitter}): the
     * same partitions as by keys whatever the splitter, -0.0, +0.0 (where it falls back to keys), NaN, the
     * infinities or none (Long.MAX_VALUE), keeping either side, on a slice of a larger array.
     */
    @ParameterizedTest
    @ValueSource(strings = {"FLOAT64", "INT64"})
    void shouldPartitionInPlaceByValuesAsByKeysWhateverTheSplitter(String name) {
        SortData type = SortData.valueOf(name);
        SplittableRandom rnd = new SplittableRandom(11);
        long[] bits = new long[3000];
        for (int i = 0; i < bits.length; i++) {
            bits[i] = i % 3 == 0 ? type.special(rnd.nextInt(40)) : type == SortData.FLOAT64
                ? Double.doubleToRawLongBits(rnd.nextInt(20) - 10.0) : rnd.nextLong(-10, 10);
        }
        List<Long> splitters = new ArrayList<>(List.of(Long.MAX_VALUE, Long.MIN_VALUE, 0L, -1L, 3L));
        for (int i = 0; i < 40; i++) {
            splitters.add(type.key(type.special(i)));
        }
        for (long splitter : splitters) {
            for (int own = 0; own < 2; own++) {
                MemorySegment words;
                if (type == SortData.FLOAT64) {
                    double[] values = new double[bits.length + 10];
                    for (int i = 0; i < bits.length; i++) {
                        values[i + 5] = Double.longBitsToDouble(bits[i]);
                    }
                    words = MemorySegment.ofArray(values).asSlice(5L * Long.BYTES, (long) bits.length * Long.BYTES);
                } else {
                    long[] values = new long[bits.length + 10];
                    System.arraycopy(bits, 0, values, 5, bits.length);
                    words = MemorySegment.ofArray(values).asSlice(5L * Long.BYTES, (long) bits.length * Long.BYTES);
                }
                long checksum = SampleSort.checksum(words);
                long expected = 0;
                for (long b : bits) {
                    expected += (type.key(b) < splitter) == (own == 0) ? 1 : 0;
                }
                long kept = SampleSort.partitionInPlace(type, words, splitter, own);
                assertEquals(expected, kept, "splitter " + splitter + ", own " + own);
                for (long i = 0; i < bits.length; i++) {
                    boolean below = type.key(words.getAtIndex(ValueLayout.JAVA_LONG, i)) < splitter;
                    assertEquals(i < kept == (own == 0), below, "word " + i + ", splitter " + splitter + ", own " + own);
                }
                assertEquals(checksum, SampleSort.checksum(words), "the same words, bit for bit");
            }
        }
    }

    @Test
    void shouldTakeValueComparisonsOnlyWhereTheyAgreeWithKeys() {
        assertTrue(Double.isNaN(SampleSort.plainSplitter(SortData.FLOAT64, SortData.FLOAT64.key(0L))), "+0.0");
        assertTrue(Double.isNaN(SampleSort.plainSplitter(SortData.FLOAT64,
            SortData.FLOAT64.key(Double.doubleToRawLongBits(Double.NaN)))), "NaN");
        assertTrue(Double.isNaN(SampleSort.plainSplitter(SortData.INT64, 5)), "int64 compares its keys");
        for (double d : new double[] {-0.0, 1.5, -2.25, Double.NEGATIVE_INFINITY, Double.POSITIVE_INFINITY, Double.MIN_VALUE}) {
            assertEquals(Double.doubleToRawLongBits(d), Double.doubleToRawLongBits(
                SampleSort.plainSplitter(SortData.FLOAT64, SortData.FLOAT64.key(Double.doubleToRawLongBits(d)))), "" + d);
        }
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void shouldWarmUpOnEveryTypeWithAndWithoutSpecials(boolean specials) {
        for (SortData type : SortData.values()) {
            assertEquals(WarmUp.run(type, specials), WarmUp.run(type, specials), "the same steps on the same values");
        }
    }

    @Test
    void shouldSampleOneKeyPerStratumInOrderOfPosition() {
        long[] values = new long[1000];
        for (int i = 0; i < values.length; i++) {
            values[i] = i;
        }
        long[] keys = SampleSort.sampleKeys(SortData.INT64, MemorySegment.ofArray(values), 100, 4);
        for (int i = 0; i < keys.length; i++) {
            assertTrue(keys[i] >= i * 10L && keys[i] < (i + 1) * 10L, "sample " + i + " is " + keys[i]);
        }
        assertEquals(7, SampleSort.sampleKeys(SortData.INT64, MemorySegment.ofArray(new long[] {7}), 5, 1)[4]);
        assertEquals(0, SampleSort.sampleKeys(SortData.INT64, MemorySegment.ofArray(new long[0]), 5, 1).length);
    }

    @Test
    void shouldGatherIntoANewArrayWhenThePartitionOutgrowsTheWorkArray() {
        MemorySegment work = MemorySegment.ofArray(new long[] {5, 6, 0});
        MemorySegment part = SampleSort.gatherAfter(SortData.INT64, work, 2 * Long.BYTES,
            List.of(MemorySegment.ofArray(new long[] {1, 2}), MemorySegment.ofArray(new long[0])));
        assertArrayEquals(new long[] {5, 6, 1, 2}, part.toArray(ValueLayout.JAVA_LONG));
        SampleSort.sortInPlace(part);
        assertArrayEquals(new long[] {1, 2, 5, 6}, part.toArray(ValueLayout.JAVA_LONG));
    }

    @Test
    void shouldSplitAnEmptyInputAndOneWhollyOnOneSide() {
        MemorySegment none = MemorySegment.ofArray(new long[0]);
        assertEquals(0, SampleSort.splitInTwo(SortData.INT64, none, 0, none));
        MemorySegment out = MemorySegment.ofArray(new long[3]);
        assertEquals(0, SampleSort.splitInTwo(SortData.INT64, MemorySegment.ofArray(new long[] {5, 6, 7}), 1, out));
        assertEquals(3, SampleSort.splitInTwo(SortData.INT64, MemorySegment.ofArray(new long[] {5, 6, 7}),
            Long.MAX_VALUE, out));
        assertArrayEquals(new long[] {5, 6, 7}, out.toArray(ValueLayout.JAVA_LONG));
    }

    @Test
    void shouldSortOnlyTheSliceOfAWorkArray() {
        MemorySegment work = MemorySegment.ofArray(new double[] {9, 3, 2, 1, -7});
        SampleSort.sortInPlace(work.asSlice(Double.BYTES, 3 * Double.BYTES));
        assertArrayEquals(new double[] {9, 1, 2, 3, -7}, work.toArray(ValueLayout.JAVA_DOUBLE));
    }

    @Test
    void shouldHandEmptyPartitionsWhenAllValuesAreEqual() {
        MemorySegment same = MemorySegment.ofArray(new double[100]);
        long[] counts = SampleSort.count(SortData.FLOAT64, same,
            SampleSort.splitters(SampleSort.sampleKeys(SortData.FLOAT64, same, 10, 1), 4));
        assertEquals(100, Arrays.stream(counts).sum());
        assertTrue(Arrays.stream(counts).filter(c -> c == 0).count() >= 3, Arrays.toString(counts));
    }

    @Test
    void shouldGenerateTheSameValuesWhateverTheSplit() {
        long count = SortData.BLOCK * 3L + 17;
        long whole = SortData.FLOAT64.generate(5, 0, count, true, MemorySegment.ofArray(new long[(int) count]));
        long parts = 0;
        for (int w = 0; w < 4; w++) {
            long from = SortData.firstValueOf(count, w, 4);
            long to = SortData.firstValueOf(count, w + 1, 4);
            parts += SortData.FLOAT64.generate(5, from, to, true, MemorySegment.ofArray(new long[(int) (to - from)]));
        }
        assertEquals(whole, parts);
    }
}
