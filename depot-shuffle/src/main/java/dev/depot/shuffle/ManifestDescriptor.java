package dev.depot.shuffle;

/**
 * Layout of a shuffle's manifest object, {@code depot-shuffle/<shuffleId>/manifest}, sealed by
 * {@link Shuffle#create} before any map starts and read by {@link Shuffle#open} in other processes (Java or
 * Python: {@code depot.shuffle} reads the same offsets from {@code python/depot/_layout.py}, which
 * {@code ShuffleLayoutTest} checks against this class). Little-endian:
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                       magic "DSH1"                            |  0
 *  +-------------------------------+---------------+---------------+
 *  |        version (u16)          |  layout (u8)  | dtype len (u8)|  4
 *  +-------------------------------+---------------+---------------+
 *  |                         maps (u32)                            |  8
 *  +---------------------------------------------------------------+
 *  |                      partitions (u32)                         | 12
 *  +---------------------------------------------------------------+
 *  |               creator's process identity (u64)                | 16
 *  +---------------------------------------------------------------+
 *  |        element dtype, ASCII, zero-padded (32 bytes)           | 24
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * The layout is {@link #LAYOUT_PER_SLICE} or {@link #LAYOUT_PER_MAP} ({@link Shuffle.Layout}); an empty dtype
 * means the slices are plain bytes, else a NumPy type string ({@code "<f8"}) that every slice object carries in
 * its {@code ArrayMetadata}. The manifest object's metadata is the shuffle id in UTF-8 ({@link Manifest}): the
 * sweep of abandoned shuffles reads it to name the shuffle's other objects.
 */
public final class ManifestDescriptor {
    /** "DSH1" read as a little-endian int. */
    public static final int MAGIC = 'D' | 'S' << 8 | 'H' << 16 | '1' << 24;
    public static final short VERSION = 1;
    public static final byte LAYOUT_PER_SLICE = 1;
    public static final byte LAYOUT_PER_MAP = 2;
    public static final int MAX_DTYPE_LENGTH = 32;

    public static final int MAGIC_OFFSET = 0;
    public static final int VERSION_OFFSET = MAGIC_OFFSET + Integer.BYTES;
    public static final int LAYOUT_OFFSET = VERSION_OFFSET + Short.BYTES;
    public static final int DTYPE_LENGTH_OFFSET = LAYOUT_OFFSET + Byte.BYTES;
    public static final int MAPS_OFFSET = DTYPE_LENGTH_OFFSET + Byte.BYTES;
    public static final int PARTITIONS_OFFSET = MAPS_OFFSET + Integer.BYTES;
    public static final int CREATOR_OFFSET = PARTITIONS_OFFSET + Integer.BYTES;
    public static final int DTYPE_OFFSET = CREATOR_OFFSET + Long.BYTES;
    public static final int LENGTH = DTYPE_OFFSET + MAX_DTYPE_LENGTH;

    private ManifestDescriptor() {
    }
}
