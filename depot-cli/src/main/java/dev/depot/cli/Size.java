package dev.depot.cli;

import java.math.BigDecimal;
import java.util.Locale;
import picocli.CommandLine;

/**
 * Byte sizes as people type and read them. Parsing accepts plain bytes ({@code 1048576}) or a number with a
 * binary unit {@code k}, {@code m}, {@code g} or {@code t} (case-insensitive, optionally followed by {@code b} or
 * {@code ib}: {@code 64k}, {@code 512MB}, {@code 4GiB}, {@code 1.5g}); a fraction is rounded down to whole bytes.
 * Formatting gives one decimal and a binary unit ({@code 1.5 GiB}), or plain bytes below 1 KiB.
 */
final class Size {
    private static final String UNITS = "kmgt";
    private static final String[] NAMES = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};

    private Size() {
    }

    /** Parses a size; throws IllegalArgumentException with a message saying what is accepted. */
    static long parse(String text) {
        String s = text.strip().toLowerCase(Locale.ROOT);
        if (s.endsWith("ib")) {
            s = s.substring(0, s.length() - 2);
        } else if (s.endsWith("b")) {
            s = s.substring(0, s.length() - 1);
        }
        int shift = 0;
        if (!s.isEmpty()) {
            int unit = UNITS.indexOf(s.charAt(s.length() - 1));
            if (unit >= 0) {
                shift = 10 * (unit + 1);
                s = s.substring(0, s.length() - 1);
            }
        }
        if (s.isEmpty() || !s.chars().allMatch(c -> (c >= '0' && c <= '9') || c == '.')) {
            throw new IllegalArgumentException("not a size: '" + text + "' (use bytes or a unit: 64k, 512m, 4g)");
        }
        BigDecimal bytes;
        try {
            bytes = new BigDecimal(s).multiply(BigDecimal.valueOf(2).pow(shift));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not a size: '" + text + "' (use bytes or a unit: 64k, 512m, 4g)", e);
        }
        if (bytes.compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) > 0) {
            throw new IllegalArgumentException("size '" + text + "' is too large (at most " + Long.MAX_VALUE + " bytes)");
        }
        return bytes.longValue();
    }

    /** Size options and arguments for picocli: a malformed size is a usage error saying what is accepted. */
    static final class Converter implements CommandLine.ITypeConverter<Long> {
        @Override
        public Long convert(String value) {
            try {
                return parse(value);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException(e.getMessage());
            }
        }
    }

    /** {@code 0 B}, {@code 812 B}, {@code 64.0 KiB}, {@code 1.5 GiB}. */
    static String format(long bytes) {
        if (bytes < 1024) {
            return bytes + " B";
        }
        int unit = (63 - Long.numberOfLeadingZeros(bytes)) / 10;
        return String.format(Locale.ROOT, "%.1f %s", bytes / Math.pow(1024, unit), NAMES[unit]);
    }
}
