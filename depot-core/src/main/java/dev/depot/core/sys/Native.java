package dev.depot.core.sys;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.file.Path;

/**
 * The few libc calls Depot needs, as FFM downcalls (no JNI). Linux x86-64 and aarch64.
 * Handles are resolved once and held in static finals.
 */
// Restricted FFM methods are the point of this class; the launcher passes --enable-native-access.
@SuppressWarnings("restricted")
public final class Native {
    private static final boolean AARCH64 = "aarch64".equals(System.getProperty("os.arch"));
    /** {@code SYS_futex}: 202 on x86-64, 98 on aarch64. */
    private static final long SYS_FUTEX = AARCH64 ? 98 : 202;
    /** {@code SYS_newfstatat}: 262 on x86-64, 79 on aarch64. */
    private static final long SYS_NEWFSTATAT = AARCH64 ? 79 : 262;
    private static final int AT_FDCWD = -100;
    private static final int AT_SYMLINK_NOFOLLOW = 0x100;
    /** {@code SYS_pidfd_open}: 434 on x86-64 and on aarch64 (the generic table). */
    private static final long SYS_PIDFD_OPEN = 434;
    /** Shared (not {@code _PRIVATE}) futex ops: the word lives in a mapping that several processes share. */
    private static final int FUTEX_WAIT = 0;
    private static final int FUTEX_WAKE = 1;
    private static final int O_RDWR = 0x2;
    private static final int O_CREAT = 0x40;
    private static final int O_EXCL = 0x80;
    private static final int O_CLOEXEC = 0x80000;
    /** {@code O_NOFOLLOW}: 0x20000 on x86-64, 0x8000 on aarch64. */
    private static final int O_NOFOLLOW = AARCH64 ? 0x8000 : 0x20000;
    private static final int PROT_READ = 0x1;
    private static final int PROT_WRITE = 0x2;
    private static final int MAP_SHARED = 0x1;
    public static final int ENOENT = 2;
    public static final int ESRCH = 3;
    public static final int EINTR = 4;
    public static final int ENOMEM = 12;
    public static final int EACCES = 13;
    public static final int EEXIST = 17;
    public static final int ENFILE = 23;
    public static final int EMFILE = 24;
    public static final int ENOSPC = 28;
    public static final int ENOSYS = 38;
    public static final int ELOOP = 40;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final SymbolLookup LIBC = LINKER.defaultLookup();
    private static final Linker.Option CCS = Linker.Option.captureCallState("errno");
    private static final long ERRNO_OFFSET = Linker.Option.captureStateLayout()
        .byteOffset(MemoryLayout.PathElement.groupElement("errno"));
    private static final VarHandle ERRNO = ValueLayout.JAVA_INT.varHandle();

    private static final MethodHandle SYSCALL_FUTEX = LINKER.downcallHandle(
        LIBC.findOrThrow("syscall"),
        FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG,
            ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.JAVA_INT),
        Linker.Option.firstVariadicArg(1));
    private static final MethodHandle SYSCALL_PIDFD_OPEN = LINKER.downcallHandle(
        LIBC.findOrThrow("syscall"),
        FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT),
        Linker.Option.firstVariadicArg(1), CCS);
    private static final MethodHandle SYSCALL_FSTATAT = LINKER.downcallHandle(
        LIBC.findOrThrow("syscall"),
        FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.ADDRESS,
            ValueLayout.ADDRESS, ValueLayout.JAVA_INT),
        Linker.Option.firstVariadicArg(1), CCS);
    private static final MethodHandle POLL = LINKER.downcallHandle(LIBC.findOrThrow("poll"),
        FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT), CCS);
    private static final MethodHandle OPEN = LINKER.downcallHandle(LIBC.findOrThrow("open"),
        FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT),
        Linker.Option.firstVariadicArg(2), CCS);
    private static final MethodHandle CLOSE = LINKER.downcallHandle(LIBC.findOrThrow("close"),
        FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
    private static final MethodHandle FSTAT = LINKER.downcallHandle(LIBC.findOrThrow("fstat"),
        FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS), CCS);
    private static final MethodHandle MMAP = LINKER.downcallHandle(LIBC.findOrThrow("mmap"),
        FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT,
            ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG), CCS);
    private static final MethodHandle MUNMAP = LINKER.downcallHandle(LIBC.findOrThrow("munmap"),
        FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
    private static final MethodHandle GETEUID = LINKER.downcallHandle(LIBC.findOrThrow("geteuid"),
        FunctionDescriptor.of(ValueLayout.JAVA_INT));
    private static final MethodHandle POSIX_FALLOCATE = LINKER.downcallHandle(LIBC.findOrThrow("posix_fallocate"),
        FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG));
    private static final MethodHandle STRERROR = LINKER.downcallHandle(LIBC.findOrThrow("strerror"),
        FunctionDescriptor.of(ValueLayout.ADDRESS.withTargetLayout(ValueLayout.JAVA_BYTE), ValueLayout.JAVA_INT));

    /** {@code struct timespec} on 64-bit Linux: {@code tv_sec} then {@code tv_nsec}, both 64-bit. */
    private static final StructLayout TIMESPEC_LAYOUT = MemoryLayout.structLayout(
        ValueLayout.JAVA_LONG.withName("tv_sec"), ValueLayout.JAVA_LONG.withName("tv_nsec"));
    private static final long TV_SEC_OFFSET = TIMESPEC_LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("tv_sec"));
    private static final long TV_NSEC_OFFSET = TIMESPEC_LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("tv_nsec"));
    /**
     * {@code struct stat} as the kernel and glibc lay it out on x86-64, up to {@code st_size} (the rest is not
     * read; the buffer passed is {@link #STAT_BUFFER_LENGTH} bytes, larger than either architecture's struct).
     */
    private static final StructLayout STAT_X86_64 = MemoryLayout.structLayout(
        ValueLayout.JAVA_LONG.withName("st_dev"), ValueLayout.JAVA_LONG.withName("st_ino"),
        ValueLayout.JAVA_LONG.withName("st_nlink"), ValueLayout.JAVA_INT.withName("st_mode"),
        ValueLayout.JAVA_INT.withName("st_uid"), ValueLayout.JAVA_INT.withName("st_gid"), MemoryLayout.paddingLayout(4),
        ValueLayout.JAVA_LONG.withName("st_rdev"), ValueLayout.JAVA_LONG.withName("st_size"));
    /** {@code struct stat} of the generic layout (aarch64), up to {@code st_size}. */
    private static final StructLayout STAT_GENERIC = MemoryLayout.structLayout(
        ValueLayout.JAVA_LONG.withName("st_dev"), ValueLayout.JAVA_LONG.withName("st_ino"),
        ValueLayout.JAVA_INT.withName("st_mode"), ValueLayout.JAVA_INT.withName("st_nlink"),
        ValueLayout.JAVA_INT.withName("st_uid"), ValueLayout.JAVA_INT.withName("st_gid"),
        ValueLayout.JAVA_LONG.withName("st_rdev"), MemoryLayout.paddingLayout(8), ValueLayout.JAVA_LONG.withName("st_size"));
    private static final StructLayout STAT = AARCH64 ? STAT_GENERIC : STAT_X86_64;
    private static final long STAT_BUFFER_LENGTH = 256;
    private static final long ST_DEV_OFFSET = STAT.byteOffset(MemoryLayout.PathElement.groupElement("st_dev"));
    private static final long ST_INO_OFFSET = STAT.byteOffset(MemoryLayout.PathElement.groupElement("st_ino"));
    private static final long ST_MODE_OFFSET = STAT.byteOffset(MemoryLayout.PathElement.groupElement("st_mode"));
    private static final long ST_UID_OFFSET = STAT.byteOffset(MemoryLayout.PathElement.groupElement("st_uid"));
    private static final long ST_SIZE_OFFSET = STAT.byteOffset(MemoryLayout.PathElement.groupElement("st_size"));

    /** {@code struct pollfd}: the descriptor, the events asked for, the events that happened. */
    public static final StructLayout POLLFD_LAYOUT = MemoryLayout.structLayout(
        ValueLayout.JAVA_INT.withName("fd"), ValueLayout.JAVA_SHORT.withName("events"),
        ValueLayout.JAVA_SHORT.withName("revents"));
    public static final long POLLFD_LENGTH = POLLFD_LAYOUT.byteSize();
    public static final long POLLFD_FD_OFFSET = POLLFD_LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("fd"));
    public static final long POLLFD_EVENTS_OFFSET =
        POLLFD_LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("events"));
    public static final long POLLFD_REVENTS_OFFSET =
        POLLFD_LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("revents"));
    /** {@code POLLIN}: a pidfd is readable once its process has exited. */
    public static final short POLLIN = 0x1;

    /** Scratch timespec per thread, so a timed wait allocates nothing. */
    private static final ThreadLocal<MemorySegment> TIMESPEC = ThreadLocal.withInitial(
        () -> Arena.global().allocate(TIMESPEC_LAYOUT));

    private Native() {
    }

    /**
     * Blocks while the 32-bit word at {@code address} equals {@code expected}, at most {@code timeoutNanos}
     * (negative: no limit). Returns on wake-up, timeout, signal or when the word already differs: the caller
     * re-checks its condition in every case.
     */
    public static void futexWait(long address, int expected, long timeoutNanos) {
        MemorySegment ts = MemorySegment.NULL;
        if (timeoutNanos >= 0) {
            ts = TIMESPEC.get();
            ts.set(ValueLayout.JAVA_LONG, TV_SEC_OFFSET, timeoutNanos / 1_000_000_000L);
            ts.set(ValueLayout.JAVA_LONG, TV_NSEC_OFFSET, timeoutNanos % 1_000_000_000L);
        }
        try {
            long unused = (long) SYSCALL_FUTEX.invokeExact(SYS_FUTEX, address, FUTEX_WAIT, expected, ts,
                MemorySegment.NULL, 0);
        } catch (Throwable t) {
            throw new AssertionError("futex downcall failed", t);
        }
    }

    /** Wakes every process waiting on the 32-bit word at {@code address}. */
    public static void futexWakeAll(long address) {
        futexWake(address, Integer.MAX_VALUE);
    }

    /** Wakes up to {@code count} processes waiting on the 32-bit word at {@code address}. */
    public static void futexWake(long address, int count) {
        try {
            long unused = (long) SYSCALL_FUTEX.invokeExact(SYS_FUTEX, address, FUTEX_WAKE, count,
                MemorySegment.NULL, MemorySegment.NULL, 0);
        } catch (Throwable t) {
            throw new AssertionError("futex downcall failed", t);
        }
    }

    /** What {@code fstat} says about an open file: identity, type and permission bits, owner and size. */
    public record FileStatus(long device, long inode, int mode, int uid, long size) {
        private static final int S_IFMT = 0170000;
        private static final int S_IFREG = 0100000;

        public boolean isRegularFile() {
            return (mode & S_IFMT) == S_IFREG;
        }

        /** The permission bits ({@code 0777} and the set-id and sticky bits). */
        public int permissions() {
            return mode & 07777;
        }
    }

    /**
     * Opens {@code path} read-write without following a symbolic link in its last component ({@code O_NOFOLLOW}),
     * creating it exclusively with mode 0600 when {@code create}.
     *
     * @return the file descriptor, or minus the errno ({@link #ELOOP} for a symbolic link, {@link #EEXIST},
     *         {@link #ENOENT}, {@link #EACCES}, ...)
     */
    public static int openNoFollow(Path path, boolean create) {
        int flags = O_RDWR | O_NOFOLLOW | O_CLOEXEC | (create ? O_CREAT | O_EXCL : 0);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Linker.Option.captureStateLayout());
            int fd = (int) OPEN.invokeExact(state, arena.allocateFrom(path.toString()), flags, 0600);
            return fd >= 0 ? fd : -(int) ERRNO.get(state, ERRNO_OFFSET);
        } catch (Throwable t) {
            throw new AssertionError("open downcall failed", t);
        }
    }

    /** {@code fstat} of an open file descriptor: what was opened, not what a path names now. */
    public static FileStatus fstat(int fd) throws java.io.IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Linker.Option.captureStateLayout());
            MemorySegment buf = arena.allocate(STAT_BUFFER_LENGTH, 8);
            int rc = (int) FSTAT.invokeExact(state, fd, buf);
            if (rc != 0) {
                throw new java.io.IOException("fstat failed: " + strerror((int) ERRNO.get(state, ERRNO_OFFSET)));
            }
            return fileStatus(buf);
        } catch (java.io.IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError("fstat downcall failed", t);
        }
    }

    /**
     * What {@code path} names now, not following a symbolic link in its last component ({@code lstat}, through
     * the {@code newfstatat} system call: a few microseconds, where the JDK's attribute views build maps).
     *
     * @return its status, or null when it cannot be read (no such file, no permission)
     */
    public static FileStatus lstat(Path path) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Linker.Option.captureStateLayout());
            MemorySegment buf = arena.allocate(STAT_BUFFER_LENGTH, 8);
            long rc = (long) SYSCALL_FSTATAT.invokeExact(state, SYS_NEWFSTATAT, AT_FDCWD,
                arena.allocateFrom(path.toString()), buf, AT_SYMLINK_NOFOLLOW);
            return rc == 0 ? fileStatus(buf) : null;
        } catch (Throwable t) {
            throw new AssertionError("newfstatat downcall failed", t);
        }
    }

    private static FileStatus fileStatus(MemorySegment buf) {
        return new FileStatus(buf.get(ValueLayout.JAVA_LONG, ST_DEV_OFFSET), buf.get(ValueLayout.JAVA_LONG, ST_INO_OFFSET),
            buf.get(ValueLayout.JAVA_INT, ST_MODE_OFFSET), buf.get(ValueLayout.JAVA_INT, ST_UID_OFFSET),
            buf.get(ValueLayout.JAVA_LONG, ST_SIZE_OFFSET));
    }

    /** Reserves {@code length} bytes of an open file; 0 or the errno (for example {@link #ENOSPC}). */
    public static int fallocate(int fd, long length) {
        try {
            return (int) POSIX_FALLOCATE.invokeExact(fd, 0L, length);
        } catch (Throwable t) {
            throw new AssertionError("posix_fallocate downcall failed", t);
        }
    }

    /**
     * Maps {@code length} bytes of an open file shared and read-write. The mapping lives until {@code arena}
     * closes (which unmaps it); the descriptor may be closed at once.
     */
    public static MemorySegment mapShared(int fd, long length, Arena arena) throws java.io.IOException {
        MemorySegment address;
        try (Arena scratch = Arena.ofConfined()) {
            MemorySegment state = scratch.allocate(Linker.Option.captureStateLayout());
            address = (MemorySegment) MMAP.invokeExact(state, MemorySegment.NULL, length, PROT_READ | PROT_WRITE,
                MAP_SHARED, fd, 0L);
            if (address.address() == -1L) {
                throw new java.io.IOException("mmap of " + length + " bytes failed: "
                    + strerror((int) ERRNO.get(state, ERRNO_OFFSET)));
            }
        } catch (java.io.IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError("mmap downcall failed", t);
        }
        return address.reinterpret(length, arena, unmapped -> munmap(unmapped.address(), length));
    }

    private static void munmap(long address, long length) {
        try {
            int unused = (int) MUNMAP.invokeExact(MemorySegment.ofAddress(address), length);
        } catch (Throwable t) {
            throw new AssertionError("munmap downcall failed", t);
        }
    }

    /**
     * {@code pidfd_open(pid, 0)}: a descriptor that refers to the process {@code pid} is now, whatever later
     * happens to the pid, and becomes readable when that process exits (Linux 5.3 and later).
     *
     * @return the descriptor (close-on-exec), or minus the errno: {@link #ESRCH} when no such process exists,
     *         {@link #ENOSYS} on an older kernel, {@link #EMFILE} or {@link #ENFILE} when out of descriptors
     */
    public static int pidfdOpen(int pid) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Linker.Option.captureStateLayout());
            long fd = (long) SYSCALL_PIDFD_OPEN.invokeExact(state, SYS_PIDFD_OPEN, pid, 0);
            return fd >= 0 ? (int) fd : -(int) ERRNO.get(state, ERRNO_OFFSET);
        } catch (Throwable t) {
            throw new AssertionError("pidfd_open downcall failed", t);
        }
    }

    /**
     * {@code poll} of the first {@code count} {@link #POLLFD_LAYOUT} records of {@code fds}, without waiting:
     * fills in their {@code revents}.
     *
     * @param state scratch of {@link Linker.Option#captureStateLayout()} for the errno
     * @return how many records have events, or minus the errno
     */
    public static int pollNow(MemorySegment fds, int count, MemorySegment state) {
        if (count < 0 || count * POLLFD_LENGTH > fds.byteSize()) {
            throw new IndexOutOfBoundsException("poll of " + count + " records of " + POLLFD_LENGTH + " bytes in "
                + fds.byteSize() + " bytes");
        }
        try {
            int n = (int) POLL.invokeExact(state, fds, (long) count, 0);
            return n >= 0 ? n : -(int) ERRNO.get(state, ERRNO_OFFSET);
        } catch (Throwable t) {
            throw new AssertionError("poll downcall failed", t);
        }
    }

    /** A scratch segment for {@link #pollNow}'s errno, from {@code arena}. */
    public static MemorySegment errnoScratch(Arena arena) {
        return arena.allocate(Linker.Option.captureStateLayout());
    }

    /** Closes a file descriptor (errors are ignored: there is nothing to flush). */
    public static void close(int fd) {
        try {
            int unused = (int) CLOSE.invokeExact(fd);
        } catch (Throwable t) {
            throw new AssertionError("close downcall failed", t);
        }
    }

    /** This process's effective user id. */
    public static int geteuid() {
        try {
            return (int) GETEUID.invokeExact();
        } catch (Throwable t) {
            throw new AssertionError("geteuid downcall failed", t);
        }
    }

    /** The text of an errno value, for messages. */
    public static String strerror(int errno) {
        try {
            MemorySegment s = (MemorySegment) STRERROR.invokeExact(errno);
            return s.reinterpret(256).getString(0);
        } catch (Throwable t) {
            return "errno " + errno;
        }
    }
}
