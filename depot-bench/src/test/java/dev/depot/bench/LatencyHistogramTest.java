package dev.depot.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class LatencyHistogramTest {
    @Test
    void shouldPutEveryValueInTheBucketThatStartsAtOrBelowIt() {
        SplittableRandom r = new SplittableRandom(1);
        for (int i = 0; i < 100_000; i++) {
            long v = r.nextLong(1L << r.nextInt(1, 50));
            int index = LatencyHistogram.indexOf(v);
            assertTrue(LatencyHistogram.lowestOf(index) <= v, "value " + v + " index " + index);
            assertTrue(LatencyHistogram.lowestOf(index + 1) > v, "value " + v + " index " + index);
        }
    }

    @Test
    void shouldBeExactBelow128() {
        for (long v = 0; v < 128; v++) {
            assertEquals(v, LatencyHistogram.lowestOf(LatencyHistogram.indexOf(v)));
        }
    }

    @Test
    void shouldReportPercentilesWithinTheBucketError() {
        LatencyHistogram h = new LatencyHistogram();
        for (long v = 1; v <= 100_000; v++) {
            h.record(v * 10);
        }
        assertEquals(100_000, h.count());
        assertEquals(500_000, h.percentile(0.5), 500_000 * 0.016);
        assertEquals(990_000, h.percentile(0.99), 990_000 * 0.016);
        assertEquals(1_000_000, h.max());
        assertEquals(10, h.min());
    }
}
