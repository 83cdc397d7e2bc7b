package dev.depot.core.index;

/**
 * States of an index entry. Transitions (owner = the client slot that may make the next step):
 * <pre>
 *   EMPTY, TOMBSTONE --insert (lock)--&gt; CREATING(owner)
 *   CREATING(owner) --seal (CAS by owner)--&gt; SEALED
 *   CREATING(owner) --abort (lock)--&gt; TOMBSTONE
 *   SEALED --delete (CAS)--&gt; DELETING(owner) --no pins: free (lock)--&gt; TOMBSTONE
 *                                            --pinned--&gt; DELETE_PENDING --last unpin / sweep--&gt; DELETING
 *   SEALED --evict (CAS, under lock)--&gt; EVICTING(owner) --no pins--&gt; TOMBSTONE, --pinned--&gt; SEALED
 *   TOMBSTONE --cleanup when the next slot is EMPTY (lock)--&gt; EMPTY
 *   SEALED(KEEP) --spill file complete: EVICTING(daemon), no pins (lock)--&gt; SPILLED (block freed)
 *   SPILLED --get (CAS)--&gt; RESTORE_WANTED --block allocated (lock)--&gt; RESTORING(daemon) --file read--&gt; SEALED
 *   SPILLED, RESTORE_WANTED --delete (CAS, then lock)--&gt; TOMBSTONE
 * </pre>
 * Only SEALED entries can be pinned. A reader that finds EVICTING waits briefly: eviction either frees the
 * object or puts it back.
 */
public enum EntryState {
    EMPTY(0),
    CREATING(1),
    SEALED(2),
    DELETING(3),
    DELETE_PENDING(4),
    EVICTING(5),
    TOMBSTONE(6),
    /** A KEEP object written to the spill directory; it holds an index slot but no heap (minor version 1). */
    SPILLED(7),
    /** A spilled object a reader asked for: the daemon's spiller restores it. */
    RESTORE_WANTED(8),
    /** The daemon is reading a spilled object back into the block the entry names. */
    RESTORING(9);

    private static final EntryState[] BY_CODE = values();

    public final int code;

    EntryState(int code) {
        this.code = code;
    }

    /** True when {@code code} is the code of a state (anything else in shared memory is corruption). */
    public static boolean isKnown(int code) {
        return code >= 0 && code < BY_CODE.length;
    }

    /** Decodes a state read from shared memory; an unknown code means corruption. */
    public static EntryState of(int code) {
        if (code < 0 || code >= BY_CODE.length) {
            throw new IllegalStateException("corrupt index entry: unknown state code " + code
                + " (known 0.." + (BY_CODE.length - 1) + "); run `depot doctor`");
        }
        return BY_CODE[code];
    }

    /** True for entries that hold an id (all but SPILLED and RESTORE_WANTED also hold heap space). */
    public boolean isLive() {
        return this != EMPTY && this != TOMBSTONE;
    }

    /** True for live entries whose data is on disk, not in the heap. */
    public boolean isSpilled() {
        return this == SPILLED || this == RESTORE_WANTED;
    }
}
