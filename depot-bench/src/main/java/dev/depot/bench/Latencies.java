package dev.depot.bench;

import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;

/**
 * Nanosecond latencies in HdrHistogram {@link Histogram}s: three significant digits (0.1 % error), sized for
 * up to a minute up front so that recording never allocates in a measured loop (it resizes past that), and
 * the compact summary a child prints on its result line. A histogram belongs to one thread.
 */
final class Latencies {
    private static final int SIGNIFICANT_DIGITS = 3;
    private static final long PRESIZED_MAX_NANOS = TimeUnit.MINUTES.toNanos(1);

    private Latencies() {
    }

    static Histogram histogram() {
        Histogram h = new Histogram(PRESIZED_MAX_NANOS, SIGNIFICANT_DIGITS);
        h.setAutoResize(true);
        return h;
    }

    /** Records {@code nanos}; a negative value (a stamp from a clock that stepped) counts as 0. */
    static void record(Histogram h, long nanos) {
        h.recordValue(Math.max(0, nanos));
    }

    /** Compact text form for a child's result line: {@code count,p50,p99,p999,max,mean}. */
    static String summary(Histogram h) {
        return h.getTotalCount() + "," + h.getValueAtPercentile(50) + "," + h.getValueAtPercentile(99) + ","
            + h.getValueAtPercentile(99.9) + "," + h.getMaxValue() + "," + Units.round(h.getMean());
    }

    /** Parses {@link #summary}: count, p50, p99, p999, max, mean. */
    static double[] parse(String summary) {
        String[] parts = summary.split(",");
        double[] out = new double[parts.length];
        for (int i = 0; i < parts.length; i++) {
            out[i] = Double.parseDouble(parts[i]);
        }
        return out;
    }
}
