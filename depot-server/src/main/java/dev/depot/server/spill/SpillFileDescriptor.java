package dev.depot.server.spill;

/**
 * Layout of one spill file, {@code SPILL_DIR/<id hex>.<slot>.<generation>.spill}: a 64-byte header, then the
 * object's data, then its metadata (as they lie in its heap block). Written under
 * {@code <name>.tmp} and renamed when complete, so a crash leaves whole files or temporary ones, which the
 * next daemon deletes. The name ties the file to the index entry (slot, generation) that it belongs to; the
 * header repeats what is needed to check that a file is the object asked for, and a CRC32C
 * ({@link java.util.zip.CRC32C}, Castagnoli, an intrinsic) of the header's first {@link #CHECKSUM_OFFSET}
 * bytes and of the data and metadata, checked on every restore.
 *
 * <pre>
 *    0                   1                   2                   3
 *    0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *   +---------------------------------------------------------------+ 0
 *   |                       Magic "DEPOTSPL"                        |
 *   +-------------------------------+-------------------------------+ 8
 *   |          Version              |        Header length          |
 *   +-------------------------------+-------------------------------+ 16
 *   |                          Data length                          |
 *   +-------------------------------+-------------------------------+ 24
 *   |        Metadata length        |          Generation           |
 *   +-------------------------------+-------------------------------+ 32
 *   |                     Object id (20 bytes)                      |
 *   +                               +-------------------------------+ 52
 *   |                               |     CRC32C (version 2 on)     |
 *   +-------------------------------+-------------------------------+ 56
 *   |                          (pad to 64)                          |
 *   +---------------------------------------------------------------+ 64
 *   | data (data length bytes), metadata (metadata length bytes)    |
 * </pre>
 * Little-endian. Version 1 had no checksum; its files are refused (the object is reported lost).
 */
public final class SpillFileDescriptor {
    /** "DEPOTSPL" in little-endian ASCII. */
    public static final long MAGIC = 0x4c50_5354_4f50_4544L;
    public static final int VERSION = 2;

    public static final int MAGIC_OFFSET = 0;
    public static final int VERSION_OFFSET = MAGIC_OFFSET + Long.BYTES;
    public static final int HEADER_LENGTH_OFFSET = VERSION_OFFSET + Integer.BYTES;
    public static final int DATA_LENGTH_OFFSET = HEADER_LENGTH_OFFSET + Integer.BYTES;
    public static final int METADATA_LENGTH_OFFSET = DATA_LENGTH_OFFSET + Long.BYTES;
    public static final int GENERATION_OFFSET = METADATA_LENGTH_OFFSET + Integer.BYTES;
    public static final int ID_OFFSET = GENERATION_OFFSET + Integer.BYTES;
    public static final int ID_LENGTH = 20;
    /** CRC32C of bytes {@code [0, CHECKSUM_OFFSET)} of the header, then of the data and metadata. */
    public static final int CHECKSUM_OFFSET = ID_OFFSET + ID_LENGTH;
    public static final int HEADER_LENGTH = 64;

    public static final String SUFFIX = ".spill";
    public static final String TEMPORARY_SUFFIX = ".tmp";

    static {
        if (CHECKSUM_OFFSET + Integer.BYTES > HEADER_LENGTH) {
            throw new AssertionError("spill file header fields overlap");
        }
    }

    private SpillFileDescriptor() {
    }

    /** The file name of the spilled entry {@code (slot, generation)} with id {@code idHex}. */
    public static String fileName(String idHex, int slot, int generation) {
        return idHex + "." + slot + "." + Integer.toUnsignedString(generation) + SUFFIX;
    }

    /**
     * The {@code (slot, generation)} a spill file name names, as {@code slot << 32 | generation}, or -1 when
     * the name is not a spill file's.
     */
    public static long parseName(String name) {
        if (!name.endsWith(SUFFIX)) {
            return -1;
        }
        String[] parts = name.substring(0, name.length() - SUFFIX.length()).split("\\.");
        if (parts.length != 3) {
            return -1;
        }
        try {
            int slot = Integer.parseInt(parts[1]);
            int generation = Integer.parseUnsignedInt(parts[2]);
            return slot < 0 ? -1 : ((long) slot << 32) | Integer.toUnsignedLong(generation);
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
