package dev.depot.core.memory;

/**
 * Bounds checks for values read from shared memory or a socket, which are untrusted. Computed in {@code long}
 * so that they cannot overflow; the message names what was checked, the index, the length and the capacity.
 */
public final class Bounds {
    private Bounds() {
    }

    /** Fails unless {@code [offset, offset + length)} lies within {@code [0, capacity)}. */
    public static void checkRange(String what, long offset, long length, long capacity) {
        if (offset < 0 || length < 0 || offset > capacity || length > capacity - offset) {
            throw new IndexOutOfBoundsException(what + ": offset=" + offset + " length=" + length
                + " capacity=" + capacity);
        }
    }

    /** Fails unless {@code 0 <= index < limit}. */
    public static int checkIndex(String what, long index, long limit) {
        if (index < 0 || index >= limit) {
            throw new IndexOutOfBoundsException(what + ": index=" + index + " limit=" + limit);
        }
        return (int) index;
    }

    public static long alignUp(long value, long alignment) {
        return (value + alignment - 1) & -alignment;
    }
}
