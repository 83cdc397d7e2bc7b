package dev.depot.core.heap;

/**
 * Layout of a heap block. The heap is a sequence of blocks that covers it exactly; every block starts on a
 * {@link #ALIGNMENT} boundary with this header, so object data (right after the header) is 64-byte aligned.
 * Metadata follows the data.
 *
 * <pre>
 *    0                   1                   2                   3
 *    0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *   +---------------------------------------------------------------+ 0
 *   |  Size and flags: block size (multiple of 64) | FREE bit (bit 0) |
 *   +---------------------------------------------------------------+ 8
 *   |             Size of the previous block (0 for the first)       |
 *   +---------------------------------------------------------------+ 16
 *   |          Next free block in this bin (-1 = none), if free      |
 *   +---------------------------------------------------------------+ 24
 *   |          Previous free block in this bin (-1 = none), if free  |
 *   +---------------------------------------------------------------+ 32
 *   |          Owner: index slot of the object, if allocated         |
 *   +---------------------------------------------------------------+ 40
 *   +---------------------------------------------------------------+ 40 .. 64 reserved
 *   |  Object data (dataLength) | metadata (metadataLength) | slack  |
 *   +---------------------------------------------------------------+ size
 * </pre>
 * Headers are written only under the allocator lock and are derived state: after a crash, recovery rebuilds
 * every header and free list from the object index, which is the truth. The owner slot lets eviction, which
 * looks at a victim's neighbours in address order, find a block's object; it is trusted only when that index
 * entry is live and names this block.
 */
public final class HeapBlockDescriptor {
    public static final int SIZE_OFFSET = 0;
    public static final int PREV_SIZE_OFFSET = SIZE_OFFSET + Long.BYTES;
    public static final int NEXT_FREE_OFFSET = PREV_SIZE_OFFSET + Long.BYTES;
    public static final int PREV_FREE_OFFSET = NEXT_FREE_OFFSET + Long.BYTES;
    public static final int OWNER_SLOT_OFFSET = PREV_FREE_OFFSET + Long.BYTES;
    public static final int HEADER_LENGTH = 64;
    public static final int ALIGNMENT = 64;
    public static final long FREE_BIT = 1L;
    public static final long NONE = -1L;

    private HeapBlockDescriptor() {
    }

    /** Size of the block that holds an object with this much data and metadata. */
    public static long blockSizeFor(long dataLength, long metadataLength) {
        long raw = HEADER_LENGTH + dataLength + metadataLength;
        return (raw + ALIGNMENT - 1) & -(long) ALIGNMENT;
    }

    /** Free-list bin of a block size: floor(log2(size)). */
    public static int binOf(long size) {
        return 63 - Long.numberOfLeadingZeros(size);
    }
}
