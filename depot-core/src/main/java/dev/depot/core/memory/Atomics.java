package dev.depot.core.memory;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * Atomic and ordered access to 32- and 64-bit words of a {@link MemorySegment} that other processes map too.
 * Offsets are byte offsets into the segment; atomic fields must be naturally aligned (the descriptors place
 * them so, and {@link #checkAligned} verifies it when a region is wrapped).
 */
public final class Atomics {
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();

    private Atomics() {
    }

    /** Fails unless {@code segment.address() + offset} is a multiple of {@code alignment}. */
    public static void checkAligned(MemorySegment segment, long offset, int alignment, String what) {
        long address = segment.address() + offset;
        if ((address & (alignment - 1)) != 0) {
            throw new IllegalStateException(what + " at offset " + offset + " is not aligned to " + alignment
                + " bytes (address 0x" + Long.toHexString(address) + ")");
        }
    }

    public static long getLongPlain(MemorySegment s, long offset) {
        return (long) LONG.get(s, offset);
    }

    public static void putLongPlain(MemorySegment s, long offset, long value) {
        LONG.set(s, offset, value);
    }

    public static long getLongAcquire(MemorySegment s, long offset) {
        return (long) LONG.getAcquire(s, offset);
    }

    public static void putLongRelease(MemorySegment s, long offset, long value) {
        LONG.setRelease(s, offset, value);
    }

    public static long getLongVolatile(MemorySegment s, long offset) {
        return (long) LONG.getVolatile(s, offset);
    }

    public static void putLongVolatile(MemorySegment s, long offset, long value) {
        LONG.setVolatile(s, offset, value);
    }

    /** Opaque load: atomic (no tearing) but unordered; for hints such as last-access times. */
    public static long getLongOpaque(MemorySegment s, long offset) {
        return (long) LONG.getOpaque(s, offset);
    }

    /** Opaque store: atomic (no tearing) but unordered; for hints such as last-access times. */
    public static void putLongOpaque(MemorySegment s, long offset, long value) {
        LONG.setOpaque(s, offset, value);
    }

    public static boolean compareAndSetLong(MemorySegment s, long offset, long expected, long value) {
        return LONG.compareAndSet(s, offset, expected, value);
    }

    public static long getAndAddLong(MemorySegment s, long offset, long delta) {
        return (long) LONG.getAndAdd(s, offset, delta);
    }

    public static int getIntPlain(MemorySegment s, long offset) {
        return (int) INT.get(s, offset);
    }

    public static void putIntPlain(MemorySegment s, long offset, int value) {
        INT.set(s, offset, value);
    }

    public static int getIntAcquire(MemorySegment s, long offset) {
        return (int) INT.getAcquire(s, offset);
    }

    public static void putIntRelease(MemorySegment s, long offset, int value) {
        INT.setRelease(s, offset, value);
    }

    public static int getIntVolatile(MemorySegment s, long offset) {
        return (int) INT.getVolatile(s, offset);
    }

    public static void putIntVolatile(MemorySegment s, long offset, int value) {
        INT.setVolatile(s, offset, value);
    }

    public static boolean compareAndSetInt(MemorySegment s, long offset, int expected, int value) {
        return INT.compareAndSet(s, offset, expected, value);
    }

    public static int getAndAddInt(MemorySegment s, long offset, int delta) {
        return (int) INT.getAndAdd(s, offset, delta);
    }
}
