package dev.depot.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** This process's minor page faults so far (field 10 of {@code /proc/self/stat}), to show first touches. */
final class MinorFaults {
    private MinorFaults() {
    }

    static long now() {
        try {
            String stat = Files.readString(Path.of("/proc/self/stat"));
            // The command name (field 2) may hold spaces; the fields after it start after the last ')'.
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
            return Long.parseLong(f[10 - 3]);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
