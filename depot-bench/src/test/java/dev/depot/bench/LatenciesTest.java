package dev.depot.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

class LatenciesTest {
    @Test
    void shouldSummarizeCountPercentilesMaxAndMeanWithinAThousandth() {
        Histogram h = Latencies.histogram();
        for (long v = 1; v <= 100_000; v++) {
            Latencies.record(h, v * 10);
        }
        double[] s = Latencies.parse(Latencies.summary(h));
        assertEquals(100_000, s[0]);
        assertEquals(500_000, s[1], 500_000 * 0.001);
        assertEquals(990_000, s[2], 990_000 * 0.001);
        assertEquals(999_000, s[3], 999_000 * 0.001);
        assertEquals(1_000_000, s[4], 1_000_000 * 0.001);
        assertEquals(500_005, s[5], 500_005 * 0.001);
    }

    @Test
    void shouldCountNegativeValuesAsZeroAndGrowPastAMinute() {
        Histogram h = Latencies.histogram();
        Latencies.record(h, -5);
        Latencies.record(h, 3_600_000_000_000L);
        assertEquals(2, h.getTotalCount());
        assertEquals(0, h.getMinValue());
        assertEquals(3_600_000_000_000L, h.getMaxValue(), 3_600_000_000_000L * 0.001);
    }
}
