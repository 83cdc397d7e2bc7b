package dev.depot.core.notify;

/**
 * Layout of the notification region: {@link #SUBSCRIBERS} subscriber rings, each a bounded multi-producer,
 * single-consumer queue of {@link EventRecordDescriptor} records. It lies between the object index and the heap
 * (its offset is the header's {@code notification offset}; format 1.2 on); it is never part of a heap block.
 *
 * <pre>
 *   +---------------------------------------------------------------+ 0  region header
 *   | Active mask (int32, CAS: bit i = ring i subscribed) | (pad)   |
 *   +---------------------------------------------------------------+ REGION_HEADER_LENGTH (128)
 *   | ring 0 | ring 1 | ... | ring SUBSCRIBERS-1   (RING_LENGTH each) |
 *   +---------------------------------------------------------------+ REGION_LENGTH
 *
 *   one ring (groups written by different processes on separate 128-byte lines)
 *    0                   1                   2                   3
 *    0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *   +---------------------------------------------------------------+ 0    the subscriber
 *   |       Owner identity (pid &lt;&lt; 32 | start ticks), 0 = free (CAS)  |
 *   |       Subscribed at (epoch ms)                                |
 *   |       Head (next position the subscriber reads, release)      |
 *   | Sleeping (int32)              |                               |
 *   +-------------------------------+-------------------------------+ 128  publishers (any process)
 *   |       Tail (next position to claim; a hint, CAS)              |
 *   |       Missed (events dropped on a full ring, getAndAdd)       |
 *   | Wake sequence (futex word)    |                               |
 *   +-------------------------------+-------------------------------+ 256
 *   |  Records: RING_RECORDS x 64 bytes (EventRecordDescriptor)     |
 *   +---------------------------------------------------------------+ RING_LENGTH
 * </pre>
 *
 * <p>Each record starts with a <b>stamp</b> word that says, for the record's cell, which lap of the ring it
 * belongs to and what state it is in ({@link EventRecordDescriptor#stamp}): {@code FREE(lap)} (writable at
 * position {@code lap * RING_RECORDS + cell}; a zero-filled region is {@code FREE(0)} everywhere),
 * {@code CLAIMED(lap, client)}, {@code COMMITTED(lap)} or {@code ABORTED(lap)}. A publisher claims a position by
 * one CAS of the stamp from {@code FREE(lap)} to {@code CLAIMED(lap, its client slot)}, advances the tail (a
 * hint other publishers help along), writes the fields, and commits with a volatile store of
 * {@code COMMITTED(lap)}; then it bumps the wake sequence and wakes the subscriber if it sleeps. A full ring
 * (the cell still holds the previous lap, unread) costs the publisher one {@code getAndAdd} of {@code missed}:
 * writers never wait for subscribers. The subscriber reads a committed record, then frees its cell for the next
 * lap with a release store of {@code FREE(lap + 1)} and advances the head.
 *
 * <p>Crashes. A publisher killed between claim and commit leaves {@code CLAIMED(lap, client)}: whoever sees
 * that client dead (the daemon's reaper before it frees the slot, a process that takes the dead slot over, or
 * the subscriber itself when the slot is free or its process gone) CASes it to {@code ABORTED(lap)}, which the
 * subscriber skips and reports as one missed event. Other publishers are not held up: they claim the next cells.
 * A subscriber killed leaves its ring owned by a dead identity: the reaper clears its bit of the active mask and
 * frees the ring; when all rings are taken, a new subscriber takes over one whose owner is dead (one CAS of the
 * owner from the dead identity to its own), daemon or not. Freeing is CAS owner to {@code RELEASING} (pid -1, no
 * process), clear the active bit, store 0, so a racing taker or reaper never clears another's bit; a process
 * killed half-way leaves {@code RELEASING}, dead like any other. A new owner first discards what the ring still
 * holds, up to the tail it found.
 */
public final class NotificationDescriptor {
    /** Subscribers a store has at most: 16 (the active mask has room for 32). */
    public static final int SUBSCRIBERS = 16;
    /** Records per ring (a power of two): what a subscriber may fall behind before events are missed. */
    public static final int RING_RECORDS = 512;

    public static final int ACTIVE_MASK_OFFSET = 0;
    public static final int REGION_HEADER_LENGTH = 128;

    public static final int OWNER_OFFSET = 0;
    public static final int SUBSCRIBED_AT_OFFSET = OWNER_OFFSET + Long.BYTES;
    public static final int HEAD_OFFSET = SUBSCRIBED_AT_OFFSET + Long.BYTES;
    public static final int SLEEPING_OFFSET = HEAD_OFFSET + Long.BYTES;
    public static final int TAIL_OFFSET = 128;
    public static final int MISSED_OFFSET = TAIL_OFFSET + Long.BYTES;
    public static final int WAKE_SEQUENCE_OFFSET = MISSED_OFFSET + Long.BYTES;
    public static final int RECORDS_OFFSET = 256;

    public static final int RING_LENGTH = RECORDS_OFFSET + RING_RECORDS * EventRecordDescriptor.RECORD_LENGTH;
    public static final int REGION_LENGTH = REGION_HEADER_LENGTH + SUBSCRIBERS * RING_LENGTH;

    static {
        if (Integer.bitCount(RING_RECORDS) != 1 || SUBSCRIBERS > Integer.SIZE || RING_LENGTH % 128 != 0
            || SLEEPING_OFFSET + Integer.BYTES > TAIL_OFFSET || WAKE_SEQUENCE_OFFSET + Integer.BYTES > RECORDS_OFFSET) {
            throw new AssertionError("notification layout is inconsistent");
        }
    }

    private NotificationDescriptor() {
    }

    /** Offset of ring {@code ring} in the region. */
    public static long ringOffset(int ring) {
        return REGION_HEADER_LENGTH + (long) ring * RING_LENGTH;
    }

    /** Offset of the record of {@code position} within its ring. */
    public static long recordOffset(long position) {
        return RECORDS_OFFSET + (position & (RING_RECORDS - 1)) * EventRecordDescriptor.RECORD_LENGTH;
    }

    /** The lap of the ring a position falls in. */
    public static long lapOf(long position) {
        return position / RING_RECORDS;
    }
}
