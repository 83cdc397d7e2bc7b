package dev.depot.core.store;

/**
 * Layout of one restore failure record, in the ring of {@link StoreHeaderDescriptor#RESTORE_FAILURES} records at
 * {@link StoreHeaderDescriptor#RESTORE_FAILURES_OFFSET}: the daemon's spiller writes one when it cannot restore a
 * spilled object, and a get that waited for that restore reads it to fail at once with the reason.
 *
 * <pre>
 *    0                   1                   2                   3
 *    0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *   +---------------------------------------------------------------+ 0
 *   |             Sequence (odd while being written)                |
 *   +-------------------------------+-------------------------------+ 8
 *   |         Index slot            |          Generation           |
 *   +-------------------------------+-------------------------------+ 16
 *   |            Kind               |        Reason length          |
 *   +-------------------------------+-------------------------------+ 24
 *   |                     Object id (20 bytes)                      |
 *   +                               +-------------------------------+ 44
 *   |                               |            (pad)              |
 *   +-------------------------------+-------------------------------+ 48
 *   |              Reason, UTF-8, REASON_MAX bytes                  |
 *   +---------------------------------------------------------------+ 256
 * </pre>
 * A seqlock with one writer (the spiller): it makes the sequence odd, writes the fields, then publishes the next
 * even sequence (release). A reader reads the sequence (acquire), copies the fields, and keeps the copy only when
 * the sequence is even, non-zero and unchanged after an acquire fence. Everything read is bounds-checked: the
 * reason length against {@link #REASON_MAX}, the kind against the known kinds.
 */
public final class RestoreFailureDescriptor {
    public static final int SEQUENCE_OFFSET = 0;
    public static final int SLOT_OFFSET = SEQUENCE_OFFSET + Long.BYTES;
    public static final int GENERATION_OFFSET = SLOT_OFFSET + Integer.BYTES;
    public static final int KIND_OFFSET = GENERATION_OFFSET + Integer.BYTES;
    public static final int REASON_LENGTH_OFFSET = KIND_OFFSET + Integer.BYTES;
    public static final int ID_OFFSET = REASON_LENGTH_OFFSET + Integer.BYTES;
    public static final int ID_LENGTH = 20;
    public static final int REASON_OFFSET = 48;
    public static final int REASON_MAX = 208;
    public static final int LENGTH = REASON_OFFSET + REASON_MAX;

    /** The spill file is missing or damaged: the object is lost and its entry dropped. */
    public static final int KIND_LOST = 1;
    /** The store has no room for the object: it stays spilled, and the spiller tries again later. */
    public static final int KIND_NO_ROOM = 2;

    static {
        if (ID_OFFSET + ID_LENGTH > REASON_OFFSET || LENGTH % 64 != 0) {
            throw new AssertionError("restore failure record fields overlap");
        }
    }

    private RestoreFailureDescriptor() {
    }

    /** Offset in the header of record {@code index} (0 .. RESTORE_FAILURES - 1). */
    public static int recordOffset(int index) {
        return StoreHeaderDescriptor.RESTORE_FAILURES_OFFSET + index * LENGTH;
    }
}
