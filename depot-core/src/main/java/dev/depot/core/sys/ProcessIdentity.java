package dev.depot.core.sys;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Identifies a process across pid reuse: its pid and its start time in clock ticks since boot (field 22 of
 * {@code /proc/PID/stat}). Both Java and Python read the same field, so both write the same identity into the
 * client table. Packed into one 64-bit word ({@code pid << 32 | startTicks & 0xffffffff}) so that a client slot
 * is claimed and identified with a single compare-and-set.
 */
public final class ProcessIdentity {
    private static final long SELF = compute(ProcessHandle.current().pid());

    private ProcessIdentity() {
    }

    /** The packed identity of this process. */
    public static long self() {
        return SELF;
    }

    public static int pidOf(long identity) {
        return (int) (identity >>> 32);
    }

    /** The packed identity of {@code pid}, or 0 when no such process exists. */
    public static long compute(long pid) {
        long ticks = startTicks(pid);
        return ticks < 0 ? 0 : (pid << 32) | (ticks & 0xffff_ffffL);
    }

    /** True when the process that {@code identity} names is still running (same pid, same start time). */
    public static boolean isAlive(long identity) {
        if (identity == 0) {
            return false;
        }
        int pid = pidOf(identity);
        return pid > 0 && compute(pid) == identity;
    }

    /** Start time of {@code pid} in clock ticks since boot, or -1 when it does not exist (or is a zombie). */
    static long startTicks(long pid) {
        String stat;
        try {
            stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"), StandardCharsets.ISO_8859_1);
        } catch (IOException e) {
            return -1;
        }
        // The command name (field 2) may hold spaces and parentheses: parse from the last ')'.
        int close = stat.lastIndexOf(')');
        if (close < 0) {
            return -1;
        }
        String[] fields = stat.substring(close + 2).split(" ");
        // fields[0] is field 3 (state); field 22 (starttime) is fields[19].
        if (fields.length < 20 || fields[0].equals("Z") || fields[0].equals("X")) {
            return -1;
        }
        return Long.parseLong(fields[19]);
    }
}
