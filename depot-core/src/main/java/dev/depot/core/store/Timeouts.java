package dev.depot.core.store;

/**
 * Timeout arithmetic that cannot overflow. A timeout is given in milliseconds: 0 means do not wait, a negative
 * one means wait forever, and so does one too large to represent in nanoseconds (about 292 years): a caller
 * who passes {@code Long.MAX_VALUE} means "forever", never "return at once". Elapsed time is measured as a
 * difference of {@link System#nanoTime} readings, never against a deadline sum that could wrap.
 */
public final class Timeouts {
    /** Returned by {@link #nanosOf} for a wait without limit. */
    public static final long FOREVER = -1;
    private static final long NANOS_PER_MILLI = 1_000_000L;

    private Timeouts() {
    }

    /** The timeout in nanoseconds, or {@link #FOREVER} for a negative or unrepresentably large one. */
    public static long nanosOf(long timeoutMillis) {
        if (timeoutMillis < 0 || timeoutMillis > Long.MAX_VALUE / NANOS_PER_MILLI) {
            return FOREVER;
        }
        return timeoutMillis * NANOS_PER_MILLI;
    }

    /**
     * Nanoseconds left of {@code timeoutNanos} (from {@link #nanosOf}) since {@code startNanos}: {@link #FOREVER}
     * for a wait without limit, else at least 0.
     */
    public static long remainingNanos(long timeoutNanos, long startNanos, long nowNanos) {
        if (timeoutNanos == FOREVER) {
            return FOREVER;
        }
        return Math.max(0, timeoutNanos - (nowNanos - startNanos));
    }

    /** As {@link #remainingNanos}, in whole milliseconds (negative: forever), for APIs that take milliseconds. */
    public static long remainingMillis(long timeoutNanos, long startNanos, long nowNanos) {
        long left = remainingNanos(timeoutNanos, startNanos, nowNanos);
        return left == FOREVER ? -1 : left / NANOS_PER_MILLI;
    }
}
