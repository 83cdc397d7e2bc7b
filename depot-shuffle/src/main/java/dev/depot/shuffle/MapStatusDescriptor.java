package dev.depot.shuffle;

/**
 * Layouts of the two small records each map task writes (little-endian; Python's {@code depot.shuffle} reads
 * and writes them at the same offsets, from {@code python/depot/_layout.py}, which {@code ShuffleLayoutTest}
 * checks against this class).
 *
 * <p>The <b>owner record</b> {@code depot-shuffle/<id>/map/<m>/owner} is sealed when the map's writer opens:
 * it names the writing process, so a reader that waits for the map can tell "still running" from "died"
 * ({@code dev.depot.core.sys.ProcessIdentity}: pid and start time).
 *
 * <pre>
 *  +---------------------------------------------------------------+
 *  |            writer's process identity (u64)                    |  0
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * <p>The <b>status record</b> {@code depot-shuffle/<id>/map/<m>/status} is sealed last, after every slice
 * object of the map: a reader that sees it {@link #STATE_COMMITTED} finds every slice sealed. It also is the
 * index of the map's output: the byte length of each partition's slice, in partition order.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                       magic "DSM1"                            |  0
 *  +---------------------------------------------------------------+
 *  |              state: 1 committed, 2 failed (u32)               |  4
 *  +---------------------------------------------------------------+
 *  |               writer's process identity (u64)                 |  8
 *  +---------------------------------------------------------------+
 *  |                        map index (u32)                        | 16
 *  +---------------------------------------------------------------+
 *  |                     partitions P (u32)                        | 20
 *  +---------------------------------------------------------------+
 *  |              P x slice length in bytes (u64 each)            ... 24
 *  +---------------------------------------------------------------+
 *  |            message length n (u32), then n bytes UTF-8        ... 24 + 8P
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * The message is empty for a committed map and says why for a failed one.
 */
public final class MapStatusDescriptor {
    public static final int OWNER_IDENTITY_OFFSET = 0;
    public static final int OWNER_LENGTH = OWNER_IDENTITY_OFFSET + Long.BYTES;

    /** "DSM1" read as a little-endian int. */
    public static final int MAGIC = 'D' | 'S' << 8 | 'M' << 16 | '1' << 24;
    public static final int STATE_COMMITTED = 1;
    public static final int STATE_FAILED = 2;
    /** Failure messages are cut to this many bytes. */
    public static final int MAX_MESSAGE_LENGTH = 4096;

    public static final int MAGIC_OFFSET = 0;
    public static final int STATE_OFFSET = MAGIC_OFFSET + Integer.BYTES;
    public static final int WRITER_OFFSET = STATE_OFFSET + Integer.BYTES;
    public static final int MAP_OFFSET = WRITER_OFFSET + Long.BYTES;
    public static final int PARTITIONS_OFFSET = MAP_OFFSET + Integer.BYTES;
    public static final int LENGTHS_OFFSET = PARTITIONS_OFFSET + Integer.BYTES;

    private MapStatusDescriptor() {
    }

    /** Offset of the slice length of {@code partition}. */
    public static long lengthOffset(int partition) {
        return LENGTHS_OFFSET + (long) Long.BYTES * partition;
    }

    /** Offset of the message length field in a record for {@code partitions} partitions. */
    public static long messageLengthOffset(int partitions) {
        return lengthOffset(partitions);
    }

    /** Length of a record for {@code partitions} partitions with a message of {@code messageBytes} bytes. */
    public static long length(int partitions, int messageBytes) {
        return messageLengthOffset(partitions) + Integer.BYTES + messageBytes;
    }
}
