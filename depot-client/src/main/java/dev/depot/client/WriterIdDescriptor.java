package dev.depot.client;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The layout of the ids of objects one worker process writes for others to read: depot.dask.distributed's
 * worker results and the slices of its DataFrame shuffle ({@code python/depot/dask/_ids.py}, which reads the
 * offsets of {@code python/depot/_layout.py}'s mirror of this class). The writer's process identity comes first,
 * so that the objects of a writer that died can be found by their id alone and deleted: live workers do it in
 * Python, {@code depot doctor} in Java. Big-endian:
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                        magic "DdW1"                           |  0
 *  +---------------------------------------------------------------+
 *  |                        writer pid                             |  4
 *  +---------------------------------------------------------------+
 *  |        writer start time, clock ticks since boot, low 32 bits |  8
 *  +---------------------------------------------------------------+
 *  |                     hash of the key (8 bytes)                 | 12
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * The pid and start ticks are the halves of the writer's process identity ({@code dev.depot.core.sys.ProcessIdentity}),
 * which tells a live writer from a dead one whose pid was reused.
 */
public final class WriterIdDescriptor {
    public static final int MAGIC_OFFSET = 0;
    public static final int PID_OFFSET = MAGIC_OFFSET + Integer.BYTES;
    public static final int START_TICKS_OFFSET = PID_OFFSET + Integer.BYTES;
    public static final int HASH_OFFSET = START_TICKS_OFFSET + Integer.BYTES;
    public static final int LENGTH = HASH_OFFSET + Long.BYTES;
    private static final byte[] MAGIC = "DdW1".getBytes(StandardCharsets.US_ASCII);

    private WriterIdDescriptor() {
    }

    /** The process identity ({@code pid << 32 | start ticks}) of the writer {@code id} names, or 0 for other ids. */
    public static long writerIdentity(ObjectId id) {
        byte[] b = id.toBytes();
        if (!Arrays.equals(b, MAGIC_OFFSET, MAGIC_OFFSET + MAGIC.length, MAGIC, 0, MAGIC.length)) {
            return 0;
        }
        ByteBuffer buf = ByteBuffer.wrap(b).order(ByteOrder.BIG_ENDIAN);
        return (long) buf.getInt(PID_OFFSET) << 32 | buf.getInt(START_TICKS_OFFSET) & 0xffff_ffffL;
    }

    /** An id of this layout: for tests and for Java writers that want their objects swept after they die. */
    public static ObjectId idOf(long writerIdentity, long hash) {
        ByteBuffer buf = ByteBuffer.allocate(LENGTH).order(ByteOrder.BIG_ENDIAN);
        buf.put(MAGIC_OFFSET, MAGIC).putInt(PID_OFFSET, (int) (writerIdentity >>> 32))
            .putInt(START_TICKS_OFFSET, (int) writerIdentity).putLong(HASH_OFFSET, hash);
        return ObjectId.fromBytes(buf.array());
    }
}
