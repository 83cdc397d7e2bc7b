package dev.depot.bench;

import java.math.BigDecimal;
import java.math.MathContext;

/** Sizes and numbers for people and for JSON. */
final class Units {
    static final long KIB = 1024;
    static final long MIB = 1024 * KIB;
    static final long GIB = 1024 * MIB;

    private Units() {
    }

    /** {@code 1 KiB}, {@code 64 MiB}, {@code 1 GiB}; exact powers only, else bytes. */
    static String size(long bytes) {
        if (bytes >= GIB && bytes % GIB == 0) {
            return bytes / GIB + " GiB";
        }
        if (bytes >= MIB && bytes % MIB == 0) {
            return bytes / MIB + " MiB";
        }
        if (bytes >= KIB && bytes % KIB == 0) {
            return bytes / KIB + " KiB";
        }
        return bytes + " B";
    }

    /** Four significant digits, no exponent: 0.0001234, 12.35, 1235000. */
    static String round(double d) {
        if (d == 0) {
            return "0";
        }
        return new BigDecimal(d).round(new MathContext(4)).stripTrailingZeros().toPlainString();
    }

    static String plain(Object v) {
        return v instanceof Double d ? round(d) : String.valueOf(v);
    }

    static double mib(long bytes) {
        return bytes / (double) MIB;
    }

    /** Bytes per nanosecond is GB/s; this returns GiB/s. */
    static double gibPerSecond(long bytes, long nanos) {
        return bytes / (double) GIB / (nanos / 1e9);
    }
}
