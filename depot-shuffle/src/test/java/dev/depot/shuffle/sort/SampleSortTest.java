package dev.depot.shuffle.sort;

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

/** The sample sort's steps give exactly Arrays.sort's order, with duplicates, NaNs (any payload) and ±0.0. */
class SampleSortTest {
    private static final double[] SPECIAL = {Double.NaN, Double.longBitsToDouble(0xfff8_0000_0000_0001L), -0.0, 0.0,
        Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, Double.MIN_VALUE, -Double.MIN_VALUE, 1.0, 1.0, -1.0};

    /** Sorts by splitting into {@code partitions}, sorting each and concatenating, as the workers do. */
    private static MemorySegment sampleSort(SortData type, MemorySegment input, int partitions) {
        long[] splitters = SampleSort.splitters(SampleSort.sampleKeys(type, input, 64, 3), partitions);
        long[] counts = SampleSort.count(type, input, splitters);
        MemorySegment[] out = new MemorySegment[partitions];
        for (int p = 0; p < partitions; p++) {
            out[p] = MemorySegment.ofArray(new long[(int) counts[p]]);
        }
        SampleSort.scatter(type, input, splitters, out);
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
        long[] gotBits = got.toArray(ValueLayout.JAVA_LONG);
        long[] expectedBits = MemorySegment.ofArray(expected).toArray(ValueLayout.JAVA_LONG);
        assertArrayEquals(expectedBits, gotBits, "bit for bit, -0.0 before 0.0, NaNs last with their payloads");
        assertEquals(-1, SampleSort.firstDisorder(SortData.FLOAT64, got));
        assertEquals(SampleSort.checksum(MemorySegment.ofArray(input)), SampleSort.checksum(got));
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
