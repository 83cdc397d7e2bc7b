package dev.depot.core.index;

/**
 * Layout of one object-index entry. The index is an open-addressing hash table of {@code indexSlots} entries
 * (a power of two), probed linearly from {@code hash(id) & (slots - 1)}. Entries are inserted and removed only
 * under the allocator lock; lookups are lock-free and validate what they read with the state word, like a
 * seqlock.
 *
 * <pre>
 *    0                   1                   2                   3
 *    0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *   +---------------------------------------------------------------+ 0
 *   | State word: generation (32) | flags (8) | owner (16) | state (8)|
 *   +---------------------------------------------------------------+ 8
 *   |                   Object id (20 bytes)                        |
 *   +                               +-------------------------------+ 28
 *   |                               |  Metadata length              |
 *   +-------------------------------+-------------------------------+ 32
 *   |              Block offset (from heap start)                   |
 *   +---------------------------------------------------------------+ 40
 *   |                       Data length                             |
 *   +---------------------------------------------------------------+ 48
 *   |                   Create time (epoch ms)                      |
 *   +---------------------------------------------------------------+ 56
 *   |     Last use (epoch µs: seal or pin release; opaque stores)    |
 *   +---------------------------------------------------------------+ 64
 * </pre>
 * The fields at 8..56 are written before the state word is published with a release store (insert) and are
 * not changed while the entry is live, except the last use, and the block offset of a spilled entry, which the
 * restorer writes under the lock before it publishes RESTORING (nobody reads the block of a SPILLED or
 * RESTORE_WANTED entry).
 *
 * <p>The flags byte of the state word (bits 24..31, minor version 1) holds {@link #FLAG_KEEP}: the object is
 * never evicted, only spilled. Flags are set at insert and kept by every transition of a live object
 * ({@link #withState}); a deleted entry drops them.
 *
 * <p>The last use orders eviction (least recently used first). The writer stores it with the seal; a reader
 * stores it when it releases its pin (never on the get itself), unless the entry holds a use less than
 * {@link #USE_RECORD_INTERVAL_MICROS} old. The create time is in epoch milliseconds.
 */
public final class IndexEntryDescriptor {
    public static final int STATE_WORD_OFFSET = 0;
    public static final int ID_OFFSET = STATE_WORD_OFFSET + Long.BYTES;
    public static final int ID_LENGTH = 20;
    /**
     * Where the id's three words lie within its 20 bytes, read little-endian: {@code w0} bytes 0..7, {@code w1}
     * bytes 8..15, {@code w2} bytes 16..19 (the same split in Java, Python and the wire protocol).
     */
    public static final int ID_W1_POSITION = Long.BYTES;
    public static final int ID_W2_POSITION = 2 * Long.BYTES;
    public static final int METADATA_LENGTH_OFFSET = ID_OFFSET + ID_LENGTH;
    public static final int BLOCK_OFFSET_OFFSET = METADATA_LENGTH_OFFSET + Integer.BYTES;
    public static final int DATA_LENGTH_OFFSET = BLOCK_OFFSET_OFFSET + Long.BYTES;
    public static final int CREATE_TIME_OFFSET = DATA_LENGTH_OFFSET + Long.BYTES;
    public static final int LAST_ACCESS_OFFSET = CREATE_TIME_OFFSET + Long.BYTES;
    public static final int ENTRY_LENGTH = 64;

    /**
     * A release records its use only when the entry's last use is at least this old: the readers of a hot
     * object store to its line at most once per interval, and an object's recorded use is at most this much
     * older than its last release.
     */
    public static final long USE_RECORD_INTERVAL_MICROS = 100;

    private static final int STATE_BITS = 8;
    private static final int OWNER_SHIFT = STATE_BITS;
    private static final int OWNER_MASK = 0xffff;
    private static final int FLAGS_SHIFT = 24;
    private static final int FLAGS_MASK = 0xff;
    private static final int GENERATION_SHIFT = 32;

    /** Flag: never evict this object; a daemon with a spill directory writes it to disk instead. */
    public static final int FLAG_KEEP = 1;

    /**
     * No entry is placed more than this many slots from its home, so every lookup ends within this many slots
     * even when deletes have left no EMPTY slot behind (tombstones would otherwise make a lookup of a missing id
     * scan the whole index).
     */
    public static final int MAX_PROBE = 1024;

    /** Entries are kept at most this full (3/4) so that probe chains stay short. */
    public static long maxObjects(int indexSlots) {
        return indexSlots - (indexSlots >> 2);
    }

    static {
        if (LAST_ACCESS_OFFSET + Long.BYTES != ENTRY_LENGTH) {
            throw new AssertionError("entry layout does not add up");
        }
    }

    private IndexEntryDescriptor() {
    }

    public static long entryOffset(int slot) {
        return (long) slot * ENTRY_LENGTH;
    }

    public static long stateWord(int generation, int owner, EntryState state) {
        return ((long) generation << GENERATION_SHIFT) | ((long) (owner & OWNER_MASK) << OWNER_SHIFT) | state.code;
    }

    /** The state code of a state word, undecoded (possibly unknown: corruption). */
    public static int stateCode(long stateWord) {
        return (int) (stateWord & 0xff);
    }

    /** True when the state word's code is a known state (see {@link EntryState#isKnown}). */
    public static boolean hasKnownState(long stateWord) {
        return EntryState.isKnown(stateCode(stateWord));
    }

    public static long stateWord(int generation, int owner, EntryState state, int flags) {
        return stateWord(generation, owner, state) | ((long) (flags & FLAGS_MASK) << FLAGS_SHIFT);
    }

    /** The same generation and flags with a new owner and state. */
    public static long withState(long stateWord, int owner, EntryState state) {
        return stateWord(generation(stateWord), owner, state, flags(stateWord));
    }

    public static int flags(long stateWord) {
        return (int) (stateWord >>> FLAGS_SHIFT) & FLAGS_MASK;
    }

    public static boolean isKept(long stateWord) {
        return (flags(stateWord) & FLAG_KEEP) != 0;
    }

    public static EntryState state(long stateWord) {
        return EntryState.of(stateCode(stateWord));
    }

    public static int owner(long stateWord) {
        return (int) (stateWord >>> OWNER_SHIFT) & OWNER_MASK;
    }

    public static int generation(long stateWord) {
        return (int) (stateWord >>> GENERATION_SHIFT);
    }
}
