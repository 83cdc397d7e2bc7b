package dev.depot.core.sys;

import java.io.FileInputStream;
import java.io.IOException;
import java.util.Arrays;

/**
 * Identifies a process across pid reuse: its pid and its start time in clock ticks since boot (field 22 of
 * {@code /proc/PID/stat}). Both Java and Python read the same field, so both write the same identity into the
 * client table. Packed into one 64-bit word ({@code pid << 32 | startTicks & 0xffffffff}) so that a client slot
 * is claimed and identified with a single compare-and-set.
 */
public final class ProcessIdentity {

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

    /**
     * Bytes read of {@code /proc/PID/stat} at most: its fields after the command name take ~300 bytes and the name
     * at most 64 (a longer file is read whole into a larger buffer).
     */
    private static final int STAT_BUFFER_LENGTH = 1024;
    /** Field 22 (starttime) counted from field 3 (state), the first after the command name. */
    private static final int START_TIME_FIELD_AFTER_STATE = 22 - 3;

    /**
     * One buffer per thread: the daemon's reaper reads the file of every client it cannot watch through a pidfd
     * ten times a second, and reading it as a String split into fields makes ~60 objects a look.
     */
    private static final ThreadLocal<byte[]> BUFFER = ThreadLocal.withInitial(() -> new byte[STAT_BUFFER_LENGTH]);
    /** Computed after the buffer above: static fields are initialised in the order they are written. */
    private static final long SELF = compute(ProcessHandle.current().pid());

    /** Start time of {@code pid} in clock ticks since boot, or -1 when it does not exist (or is a zombie). */
    static long startTicks(long pid) {
        byte[] buffer = BUFFER.get();
        int length;
        try (FileInputStream in = new FileInputStream("/proc/" + pid + "/stat")) {
            length = 0;
            int n;
            while ((n = in.read(buffer, length, buffer.length - length)) > 0) {
                length += n;
                if (length == buffer.length) {
                    buffer = Arrays.copyOf(buffer, buffer.length * 2);
                }
            }
        } catch (IOException e) {
            return -1;
        }
        return parseStartTicks(buffer, length);
    }

    /**
     * Field 22 of the {@code stat} text in {@code stat[0, length)}, or -1 for a zombie or dead process (state Z or
     * X) or text that does not have it. The command name (field 2) may hold spaces and parentheses: fields are
     * counted from the last ')'.
     */
    static long parseStartTicks(byte[] stat, int length) {
        int close = length - 1;
        while (close >= 0 && stat[close] != ')') {
            close--;
        }
        int at = close + 2;  // field 3, after ") "
        if (close < 0 || at >= length) {
            return -1;
        }
        if (stat[at] == 'Z' || stat[at] == 'X') {
            return -1;
        }
        for (int field = 0; field < START_TIME_FIELD_AFTER_STATE; field++) {
            while (at < length && stat[at] != ' ') {
                at++;
            }
            at++;  // past the space
        }
        long ticks = 0;
        int digits = 0;
        while (at < length && stat[at] >= '0' && stat[at] <= '9') {
            ticks = ticks * 10 + (stat[at++] - '0');
            digits++;
        }
        return digits == 0 ? -1 : ticks;
    }
}
