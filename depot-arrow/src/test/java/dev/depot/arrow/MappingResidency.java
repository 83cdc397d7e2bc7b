package dev.depot.arrow;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;

/**
 * How many bytes of one of this process's mappings are resident in its page table: the {@code Rss:} of the
 * {@code /proc/self/smaps} entry that contains an address. A fresh mapping starts at 0 and grows by the pages this
 * process touches through it (in fault-around units of up to 64 KiB), so it counts page touches without timing.
 */
final class MappingResidency {
    private MappingResidency() {
    }

    static long residentBytes(long address) {
        List<String> lines;
        try {
            lines = Files.readAllLines(Path.of("/proc/self/smaps"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        boolean inside = false;
        for (String line : lines) {
            int dash = line.indexOf('-');
            int space = line.indexOf(' ');
            if (dash > 0 && space > dash && isHex(line, 0, dash)) {
                long start = HexFormat.fromHexDigitsToLong(line, 0, dash);
                long end = HexFormat.fromHexDigitsToLong(line, dash + 1, space);
                inside = Long.compareUnsigned(address, start) >= 0 && Long.compareUnsigned(address, end) < 0;
            } else if (inside && line.startsWith("Rss:")) {
                return Long.parseLong(line.substring(4).replace("kB", "").trim()) * 1024;
            }
        }
        throw new IllegalStateException("no mapping of this process contains address 0x" + Long.toHexString(address));
    }

    private static boolean isHex(String s, int from, int to) {
        for (int i = from; i < to; i++) {
            if (Character.digit(s.charAt(i), 16) < 0) {
                return false;
            }
        }
        return true;
    }
}
