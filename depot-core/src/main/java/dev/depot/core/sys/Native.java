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
    /** {@code SYS_futex}: 202 on x86-64, 98 on aarch64. */
    private static final long SYS_FUTEX = "aarch64".equals(System.getProperty("os.arch")) ? 98 : 202;
    /** Shared (not {@code _PRIVATE}) futex ops: the word lives in a mapping that several processes share. */
    private static final int FUTEX_WAIT = 0;
    private static final int FUTEX_WAKE = 1;
    private static final int O_RDWR = 0x2;
    private static final int O_CREAT = 0x40;
    private static final int O_EXCL = 0x80;
    private static final int O_CLOEXEC = 0x80000;
    public static final int EINTR = 4;
    public static final int ENOSPC = 28;

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
    private static final MethodHandle OPEN = LINKER.downcallHandle(LIBC.findOrThrow("open"),
        FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT),
        Linker.Option.firstVariadicArg(2), CCS);
    private static final MethodHandle CLOSE = LINKER.downcallHandle(LIBC.findOrThrow("close"),
        FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
    private static final MethodHandle POSIX_FALLOCATE = LINKER.downcallHandle(LIBC.findOrThrow("posix_fallocate"),
        FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG));
    private static final MethodHandle STRERROR = LINKER.downcallHandle(LIBC.findOrThrow("strerror"),
        FunctionDescriptor.of(ValueLayout.ADDRESS.withTargetLayout(ValueLayout.JAVA_BYTE), ValueLayout.JAVA_INT));

    /** {@code struct timespec} on 64-bit Linux: {@code tv_sec} then {@code tv_nsec}, both 64-bit. */
    private static final StructLayout TIMESPEC_LAYOUT = MemoryLayout.structLayout(
        ValueLayout.JAVA_LONG.withName("tv_sec"), ValueLayout.JAVA_LONG.withName("tv_nsec"));
    private static final long TV_SEC_OFFSET = TIMESPEC_LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("tv_sec"));
    private static final long TV_NSEC_OFFSET = TIMESPEC_LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("tv_nsec"));
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

    /**
     * Creates {@code path} exclusively with mode 0600 and reserves {@code length} bytes for it with
     * {@code posix_fallocate}, so that a later write into the mapping can never fail with SIGBUS.
     *
     * @return 0 on success, else the errno (for example {@link #ENOSPC})
     */
    public static int createReserved(Path path, long length) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Linker.Option.captureStateLayout());
            int fd = (int) OPEN.invokeExact(state, arena.allocateFrom(path.toString()),
                O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
            if (fd < 0) {
                return (int) ERRNO.get(state, ERRNO_OFFSET);
            }
            int rc = (int) POSIX_FALLOCATE.invokeExact(fd, 0L, length);
            int unused = (int) CLOSE.invokeExact(fd);
            return rc;
        } catch (Throwable t) {
            throw new AssertionError("open/posix_fallocate downcall failed", t);
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
