package dev.depot.core.sys;

import static dev.depot.core.sys.Native.POLLFD_EVENTS_OFFSET;
import static dev.depot.core.sys.Native.POLLFD_FD_OFFSET;
import static dev.depot.core.sys.Native.POLLFD_LENGTH;
import static dev.depot.core.sys.Native.POLLFD_REVENTS_OFFSET;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

/**
 * Processes watched for their exit through pidfds ({@code pidfd_open}, Linux 5.3 and later), all polled in one
 * {@code poll} call that does not wait. A pidfd refers to the process that had the pid when it was opened, never
 * to a later process given the same pid, and turns readable when that process exits (a zombie has exited).
 *
 * <p>Each watched process has a key chosen by the caller, below the {@code keys} given at construction (the
 * daemon uses client slot numbers). The pollfd records are kept dense, so a poll passes only watched ones.
 *
 * <p>Lifecycle: owned by one thread (its memory is confined to the thread that made it); {@link #close} closes
 * every descriptor, and using the watch afterwards fails.
 */
public final class ExitWatch implements AutoCloseable {
    /** What {@link #watch} did. */
    public enum Opened {
        /** The process is watched. */
        WATCHING,
        /** No process has the pid (any more). */
        NO_SUCH_PROCESS,
        /** pidfds are not available here (kernel before 5.3, or a seccomp filter): use another check. */
        UNSUPPORTED,
        /** This process is out of file descriptors (or the system is): use another check for this one. */
        OUT_OF_DESCRIPTORS,
        /** Any other failure ({@link #lastErrno()} says which): use another check for this one. */
        FAILED
    }

    private static final int NONE = -1;
    /** {@code ENODEV}: the kernel has no anonymous inode file system, so no pidfds. */
    private static final int ENODEV = 19;
    /** {@code EPERM}: not an error pidfd_open has; a seccomp filter that forbids it answers so. */
    private static final int EPERM = 1;

    private final Arena arena = Arena.ofConfined();
    /** Dense pollfd records: {@code [0, count)} are watched. */
    private final MemorySegment records;
    private final MemorySegment errno;
    /** The key of each record. */
    private final int[] keyAt;
    /** The record of each key, or {@link #NONE}. */
    private final int[] recordOf;
    private int count;
    private int lastErrno;
    private boolean closed;

    /** A watch for keys {@code [0, keys)}. */
    public ExitWatch(int keys) {
        if (keys < 0) {
            throw new IllegalArgumentException("an exit watch needs a non-negative number of keys, got " + keys);
        }
        this.records = arena.allocate(Math.max(1, keys) * POLLFD_LENGTH, 8);
        this.errno = Native.errnoScratch(arena);
        this.keyAt = new int[keys];
        this.recordOf = new int[keys];
        Arrays.fill(recordOf, NONE);
    }

    /**
     * Starts watching process {@code pid} under {@code key}: opens a pidfd for it. The caller checks afterwards
     * that the process it meant has the pid (its start time, {@link ProcessIdentity#isAlive}): a check made
     * after the open is about the process the pidfd refers to, as a process keeps its pid for life.
     *
     * @throws IllegalStateException when {@code key} is watched already
     */
    public Opened watch(int key, int pid) {
        checkOpen();
        checkKey(key);
        if (recordOf[key] != NONE) {
            throw new IllegalStateException("key " + key + " is watched already (record " + recordOf[key] + ")");
        }
        if (pid <= 0) {
            return Opened.NO_SUCH_PROCESS;
        }
        int fd = Native.pidfdOpen(pid);
        if (fd < 0) {
            lastErrno = -fd;
            return switch (-fd) {
                case Native.ESRCH -> Opened.NO_SUCH_PROCESS;
                case Native.ENOSYS, ENODEV, EPERM -> Opened.UNSUPPORTED;
                case Native.EMFILE, Native.ENFILE, Native.ENOMEM -> Opened.OUT_OF_DESCRIPTORS;
                default -> Opened.FAILED;
            };
        }
        long at = count * POLLFD_LENGTH;
        records.set(ValueLayout.JAVA_INT, at + POLLFD_FD_OFFSET, fd);
        records.set(ValueLayout.JAVA_SHORT, at + POLLFD_EVENTS_OFFSET, Native.POLLIN);
        records.set(ValueLayout.JAVA_SHORT, at + POLLFD_REVENTS_OFFSET, (short) 0);
        keyAt[count] = key;
        recordOf[key] = count;
        count++;
        return Opened.WATCHING;
    }

    /** True when {@code key} is watched. */
    public boolean isWatching(int key) {
        checkKey(key);
        return recordOf[key] != NONE;
    }

    /** Stops watching {@code key} and closes its pidfd; nothing when it is not watched. */
    public void unwatch(int key) {
        checkOpen();
        checkKey(key);
        int r = recordOf[key];
        if (r == NONE) {
            return;
        }
        Native.close(records.get(ValueLayout.JAVA_INT, r * POLLFD_LENGTH + POLLFD_FD_OFFSET));
        int last = count - 1;
        if (r != last) {  // the last record moves into the hole
            MemorySegment.copy(records, last * POLLFD_LENGTH, records, r * POLLFD_LENGTH, POLLFD_LENGTH);
            keyAt[r] = keyAt[last];
            recordOf[keyAt[r]] = r;
        }
        recordOf[key] = NONE;
        count = last;
    }

    /** How many processes are watched. */
    public int size() {
        return count;
    }

    /**
     * Polls every watched pidfd without waiting and writes the keys of the processes that exited into
     * {@code exited} (its length at least the number of keys); they stay watched until {@link #unwatch}ed.
     *
     * @return how many keys were written, or minus the errno when the poll failed (nothing is known then)
     */
    public int pollExited(int[] exited) {
        checkOpen();
        if (count == 0) {
            return 0;
        }
        int ready = Native.pollNow(records, count, errno);
        if (ready <= 0) {
            return ready;
        }
        int n = 0;
        for (int r = 0; r < count && n < ready; r++) {
            if (records.get(ValueLayout.JAVA_SHORT, r * POLLFD_LENGTH + POLLFD_REVENTS_OFFSET) != 0) {
                exited[n++] = keyAt[r];
            }
        }
        return n;
    }

    /** The errno of the last {@link #watch} that failed. */
    public int lastErrno() {
        return lastErrno;
    }

    /** Closes every pidfd and frees the records. Closing twice is harmless. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (int r = 0; r < count; r++) {
            Native.close(records.get(ValueLayout.JAVA_INT, r * POLLFD_LENGTH + POLLFD_FD_OFFSET));
        }
        count = 0;
        arena.close();
    }

    private void checkKey(int key) {
        if (key < 0 || key >= recordOf.length) {
            throw new IndexOutOfBoundsException("exit watch key " + key + " is not below " + recordOf.length);
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("the exit watch is closed");
        }
    }
}
