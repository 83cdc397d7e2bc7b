package dev.depot.bench;

/**
 * A fixed-size log-linear histogram of nanosecond values: exact below 128, then 64 buckets per power of two
 * (under 1.6 % error). Recording is a shift and an increment, no allocation. Single-threaded.
 */
final class LatencyHistogram {
    private static final int SUB_BITS = 6;
    private static final int SUB_COUNT = 1 << SUB_BITS;
    private static final int BUCKETS = (64 - SUB_BITS) * SUB_COUNT;

    private final long[] counts = new long[BUCKETS];
    private long total;
    private long min = Long.MAX_VALUE;
    private long max;
    private double sum;

    void record(long nanos) {
        long v = Math.max(0, nanos);
        counts[indexOf(v)]++;
        total++;
        sum += v;
        min = Math.min(min, v);
        max = Math.max(max, v);
    }

    static int indexOf(long v) {
        if (v < 2 * SUB_COUNT) {
            return (int) v;
        }
        int exponent = 63 - Long.numberOfLeadingZeros(v);
        int shift = exponent - SUB_BITS;
        int mantissa = (int) (v >>> shift);
        return (exponent - SUB_BITS + 1) * SUB_COUNT + (mantissa - SUB_COUNT);
    }

    /** The smallest value that falls into bucket {@code index}. */
    static long lowestOf(int index) {
        if (index < 2 * SUB_COUNT) {
            return index;
        }
        int exponent = index / SUB_COUNT + SUB_BITS - 1;
        long mantissa = SUB_COUNT + index % SUB_COUNT;
        return mantissa << (exponent - SUB_BITS);
    }

    long count() {
        return total;
    }

    long max() {
        return max;
    }

    long min() {
        return total == 0 ? 0 : min;
    }

    double mean() {
        return total == 0 ? 0 : sum / total;
    }

    /** The value at {@code quantile} (0..1): the middle of the bucket holding that rank, clamped to min..max. */
    long percentile(double quantile) {
        if (total == 0) {
            return 0;
        }
        long rank = Math.max(1, (long) Math.ceil(quantile * total));
        long seen = 0;
        for (int i = 0; i < BUCKETS; i++) {
            seen += counts[i];
            if (seen >= rank) {
                long low = lowestOf(i);
                long width = i + 1 < BUCKETS ? lowestOf(i + 1) - low : 1;
                return Math.clamp(low + (width - 1) / 2, min, max);
            }
        }
        return max;
    }

    /** Compact text form for a child's result line: {@code count,p50,p99,p999,max,mean}. */
    String summary() {
        return total + "," + percentile(0.5) + "," + percentile(0.99) + "," + percentile(0.999) + "," + max + ","
            + Units.round(mean());
    }
}
