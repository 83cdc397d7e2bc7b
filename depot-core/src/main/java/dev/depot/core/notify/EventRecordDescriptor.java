package dev.depot.core.notify;

/**
 * One 64-byte event record of a subscriber ring ({@link NotificationDescriptor}).
 *
 * <pre>
 *    0                   1                   2                   3
 *    0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *   +---------------------------------------------------------------+ 0
 *   |  Stamp: claimer client + 1 (16) | lap (46) | kind (2)          |
 *   +-------------------------------+-------------------------------+ 8
 *   |  Type (SEALED ... RESTORED)   |  Metadata length              |
 *   +-------------------------------+-------------------------------+ 16
 *   |                         Data length                           |
 *   +---------------------------------------------------------------+ 24
 *   |                     Id (20 bytes) ...                         |
 *   +-------------------------------+-------------------------------+ 44
 *   |  ... id                       |  Publisher pid                |
 *   +-------------------------------+-------------------------------+ 48
 *   |                  Time (epoch ms)               | (pad to 64)  |
 *   +---------------------------------------------------------------+ 64
 * </pre>
 * The fields are written after the claim and before the commit (a volatile store of the stamp), so a reader that
 * sees {@code COMMITTED} sees them whole.
 */
public final class EventRecordDescriptor {
    public static final int STAMP_OFFSET = 0;
    public static final int TYPE_OFFSET = STAMP_OFFSET + Long.BYTES;
    public static final int METADATA_LENGTH_OFFSET = TYPE_OFFSET + Integer.BYTES;
    public static final int DATA_LENGTH_OFFSET = METADATA_LENGTH_OFFSET + Integer.BYTES;
    public static final int ID_OFFSET = DATA_LENGTH_OFFSET + Long.BYTES;
    public static final int ID_LENGTH = 20;
    public static final int PUBLISHER_PID_OFFSET = ID_OFFSET + ID_LENGTH;
    public static final int TIME_OFFSET = PUBLISHER_PID_OFFSET + Integer.BYTES;
    public static final int RECORD_LENGTH = 64;

    /** Stamp kinds (the low 2 bits). */
    public static final int KIND_FREE = 0;
    public static final int KIND_CLAIMED = 1;
    public static final int KIND_COMMITTED = 2;
    public static final int KIND_ABORTED = 3;
    public static final int KIND_BITS = 2;
    public static final int CLAIMER_SHIFT = 48;
    public static final long LAP_MASK = (1L << (CLAIMER_SHIFT - KIND_BITS)) - 1;

    /** Event types. */
    public static final int TYPE_SEALED = 1;
    public static final int TYPE_DELETED = 2;
    public static final int TYPE_EVICTED = 3;
    public static final int TYPE_SPILLED = 4;
    public static final int TYPE_RESTORED = 5;

    static {
        if (TIME_OFFSET + Long.BYTES > RECORD_LENGTH || TIME_OFFSET % Long.BYTES != 0) {
            throw new AssertionError("event record fields overlap");
        }
    }

    private EventRecordDescriptor() {
    }

    /** A stamp of {@code kind} for {@code lap}; {@code claimer} (a client slot) only for {@link #KIND_CLAIMED}. */
    public static long stamp(long lap, int kind, int claimer) {
        long c = kind == KIND_CLAIMED ? (long) (claimer + 1) << CLAIMER_SHIFT : 0;
        return c | (lap & LAP_MASK) << KIND_BITS | kind;
    }

    public static int kindOf(long stamp) {
        return (int) (stamp & ((1 << KIND_BITS) - 1));
    }

    public static long lapOf(long stamp) {
        return (stamp >>> KIND_BITS) & LAP_MASK;
    }

    /** The client slot that claimed a {@link #KIND_CLAIMED} stamp. */
    public static int claimerOf(long stamp) {
        return (int) (stamp >>> CLAIMER_SHIFT) - 1;
    }
}
