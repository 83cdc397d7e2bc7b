package dev.depot.core.index;

import static dev.depot.core.index.IndexEntryDescriptor.*;

import dev.depot.core.clients.ClientTableDescriptor;
import dev.depot.core.memory.Atomics;
import dev.depot.errors.StoreFormatException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * The object index: an open-addressing hash table over {@link IndexEntryDescriptor} entries. Ids are passed
 * as three words read little-endian from the 20 id bytes: {@code w0} (bytes 0..7), {@code w1} (8..15),
 * {@code w2} (16..19).
 *
 * <p>{@link #insert} and {@link #remove} run under the allocator lock; {@link #findSealed} is lock-free and
 * returns a pin record {@code (slot, generation)} that the caller validates after pinning.
 */
public final class ObjectIndex {
    private static final ValueLayout.OfLong LONG_LE = ValueLayout.JAVA_LONG.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt INT_LE = ValueLayout.JAVA_INT.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);

    private final MemorySegment entries;
    private final int slots;
    private final int mask;
    /** Slots probed from an id's home at most: {@link IndexEntryDescriptor#MAX_PROBE}, or all of a small index. */
    private final int maxProbe;

    public ObjectIndex(MemorySegment entries, int slots) {
        if (entries.byteSize() != (long) slots * ENTRY_LENGTH || Integer.bitCount(slots) != 1) {
            throw new IllegalArgumentException("index of " + entries.byteSize() + " bytes does not hold " + slots
                + " entries of " + ENTRY_LENGTH + " bytes (a power of two)");
        }
        this.entries = entries;
        this.slots = slots;
        this.mask = slots - 1;
        this.maxProbe = Math.min(slots, MAX_PROBE);
        Atomics.checkAligned(entries, 0, ENTRY_LENGTH, "object index");
    }

    public int slots() {
        return slots;
    }

    /** Home slot of an id: a mix of its first word (ids are random or hashed, but mix anyway). */
    public int home(long w0, long w1) {
        long h = (w0 ^ Long.rotateLeft(w1, 29)) * 0x9E3779B97F4A7C15L;
        return (int) (h >>> 40) & mask;
    }

    /** Home slot of the id stored in {@code slot}. */
    public int homeOfSlot(int slot) {
        long base = entryOffset(slot) + ID_OFFSET;
        return home(entries.get(LONG_LE, base), entries.get(LONG_LE, base + ID_W1_POSITION));
    }

    /**
     * The state word of {@code slot} (acquire).
     *
     * @throws StoreFormatException naming the slot when its state code is unknown (corruption)
     */
    public long stateWordAcquire(int slot) {
        return checkedStateWord(slot, Atomics.getLongAcquire(entries, entryOffset(slot) + STATE_WORD_OFFSET));
    }

    /** As {@link #stateWordAcquire}, volatile. */
    public long stateWordVolatile(int slot) {
        return checkedStateWord(slot, Atomics.getLongVolatile(entries, entryOffset(slot) + STATE_WORD_OFFSET));
    }

    /** The state word as stored, unchecked (volatile): for recovery and the doctor, which drop corrupt entries. */
    public long rawStateWordVolatile(int slot) {
        return Atomics.getLongVolatile(entries, entryOffset(slot) + STATE_WORD_OFFSET);
    }

    private static long checkedStateWord(int slot, long sw) {
        if (!hasKnownState(sw)) {
            throw new StoreFormatException("index slot " + slot + " is corrupt: unknown state code " + stateCode(sw)
                + "; run `depot doctor` to drop the entry");
        }
        return sw;
    }

    public boolean compareAndSetStateWord(int slot, long expected, long value) {
        return Atomics.compareAndSetLong(entries, entryOffset(slot) + STATE_WORD_OFFSET, expected, value);
    }

    /** Publishes a new state word (release): everything written to the entry before it is visible with it. */
    public void putStateWordRelease(int slot, long value) {
        Atomics.putLongRelease(entries, entryOffset(slot) + STATE_WORD_OFFSET, value);
    }

    /**
     * Finds a SEALED or EVICTING entry with this id. Lock-free.
     *
     * @return the pin record {@code (slot, generation)} of the entry as it was when its id matched, or 0
     */
    public long findSealed(long w0, long w1, int w2) {
        int slot = home(w0, w1);
        for (int probe = 0; probe < maxProbe; probe++, slot = (slot + 1) & mask) {
            long sw = stateWordAcquire(slot);
            EntryState st = state(sw);
            if (st == EntryState.EMPTY) {
                return 0;
            }
            if ((st == EntryState.SEALED || st == EntryState.EVICTING) && idEquals(slot, w0, w1, w2)) {
                // The id was read after the acquire of generation g; the caller re-reads the state word after
                // pinning, and a matching generation proves the id belonged to generation g.
                VarHandle.acquireFence();
                return ClientTableDescriptor.pinRecord(slot, generation(sw));
            }
        }
        return 0;
    }

    /**
     * Finds any entry with this id that blocks a create (CREATING, SEALED or EVICTING), or -1. Under the lock.
     */
    public int findBlocking(long w0, long w1, int w2) {
        int slot = home(w0, w1);
        for (int probe = 0; probe < maxProbe; probe++, slot = (slot + 1) & mask) {
            EntryState st = state(stateWordAcquire(slot));
            if (st == EntryState.EMPTY) {
                return -1;
            }
            if (st != EntryState.TOMBSTONE && st != EntryState.DELETING && st != EntryState.DELETE_PENDING
                && idEquals(slot, w0, w1, w2)) {
                return slot;
            }
        }
        return -1;
    }

    /**
     * Finds a spilled entry with this id (SPILLED, RESTORE_WANTED or RESTORING), or -1. Lock-free; the caller
     * validates what it does with a CAS of the state word.
     */
    public int findSpilled(long w0, long w1, int w2) {
        int slot = home(w0, w1);
        for (int probe = 0; probe < maxProbe; probe++, slot = (slot + 1) & mask) {
            EntryState st = state(stateWordAcquire(slot));
            if (st == EntryState.EMPTY) {
                return -1;
            }
            if ((st.isSpilled() || st == EntryState.RESTORING) && idEquals(slot, w0, w1, w2)) {
                return slot;
            }
        }
        return -1;
    }

    /** Finds any live entry with this id in the given state, or -1. Lock-free; the caller validates with a CAS. */
    public int findInState(long w0, long w1, int w2, EntryState wanted) {
        int slot = home(w0, w1);
        for (int probe = 0; probe < maxProbe; probe++, slot = (slot + 1) & mask) {
            EntryState st = state(stateWordAcquire(slot));
            if (st == EntryState.EMPTY) {
                return -1;
            }
            if (st == wanted && idEquals(slot, w0, w1, w2)) {
                return slot;
            }
        }
        return -1;
    }

    /** True when an id with this home can be inserted: a free slot lies within the probe limit. Under the lock. */
    public boolean hasRoomFor(long w0, long w1) {
        int slot = home(w0, w1);
        for (int probe = 0; probe < maxProbe; probe++, slot = (slot + 1) & mask) {
            EntryState st = state(stateWordAcquire(slot));
            if (st == EntryState.TOMBSTONE || st == EntryState.EMPTY) {
                return true;
            }
        }
        return false;
    }

    /**
     * Inserts a CREATING entry owned by {@code owner}. Under the allocator lock; the caller checked that no
     * blocking entry has this id and that the index has room.
     *
     * @return the pin record {@code (slot, generation)} of the new entry
     */
    public long insert(long w0, long w1, int w2, long blockOffset, long dataLength, int metadataLength, int owner) {
        return insert(w0, w1, w2, blockOffset, dataLength, metadataLength, owner, 0);
    }

    /** As {@link #insert(long, long, int, long, long, int, int)} with state-word {@code flags}. */
    public long insert(long w0, long w1, int w2, long blockOffset, long dataLength, int metadataLength, int owner,
                       int flags) {
        int slot = home(w0, w1);
        int target = -1;
        for (int probe = 0; probe < maxProbe; probe++, slot = (slot + 1) & mask) {
            EntryState st = state(stateWordAcquire(slot));
            if (st == EntryState.TOMBSTONE || st == EntryState.EMPTY) {
                target = slot;
                break;
            }
        }
        if (target < 0) {
            throw new IllegalStateException("object index has no free slot among " + maxProbe
                + (maxProbe < slots ? " slots from this id's home (check hasRoomFor first)" : ""));
        }
        long base = entryOffset(target);
        int generation = generation(stateWordAcquire(target)) + 1;
        entries.set(LONG_LE, base + ID_OFFSET, w0);
        entries.set(LONG_LE, base + ID_OFFSET + ID_W1_POSITION, w1);
        entries.set(INT_LE, base + ID_OFFSET + ID_W2_POSITION, w2);
        entries.set(ValueLayout.JAVA_INT, base + METADATA_LENGTH_OFFSET, metadataLength);
        entries.set(ValueLayout.JAVA_LONG, base + BLOCK_OFFSET_OFFSET, blockOffset);
        entries.set(ValueLayout.JAVA_LONG, base + DATA_LENGTH_OFFSET, dataLength);
        long now = nowMicros();
        entries.set(ValueLayout.JAVA_LONG, base + CREATE_TIME_OFFSET, now / 1000);
        entries.set(ValueLayout.JAVA_LONG, base + LAST_ACCESS_OFFSET, now);
        // Publishes the fields above to lock-free readers, who acquire the state word before reading them.
        putStateWordRelease(target, stateWord(generation, owner, EntryState.CREATING, flags));
        return ClientTableDescriptor.pinRecord(target, generation);
    }

    /**
     * Turns a live entry into a tombstone (same generation), then turns trailing tombstones back into EMPTY
     * when the next slot is EMPTY, so that probe chains do not grow forever. Under the allocator lock.
     */
    public void remove(int slot) {
        int gen = generation(stateWordAcquire(slot));
        putStateWordRelease(slot, stateWord(gen, 0, EntryState.TOMBSTONE));
        if (state(stateWordAcquire((slot + 1) & mask)) != EntryState.EMPTY) {
            return;
        }
        // No chain continues past an EMPTY slot, so tombstones right before one end no chain either.
        int s = slot;
        for (int n = 0; n < slots; n++) {
            long sw = stateWordAcquire(s);
            if (state(sw) != EntryState.TOMBSTONE) {
                break;
            }
            putStateWordRelease(s, stateWord(generation(sw), 0, EntryState.EMPTY));
            s = (s - 1) & mask;
        }
    }

    public boolean idEquals(int slot, long w0, long w1, int w2) {
        long base = entryOffset(slot) + ID_OFFSET;
        return entries.get(LONG_LE, base) == w0 && entries.get(LONG_LE, base + ID_W1_POSITION) == w1
            && entries.get(INT_LE, base + ID_W2_POSITION) == w2;
    }

    /** Copies the 20 id bytes of a slot into {@code out}. */
    public void readId(int slot, byte[] out) {
        MemorySegment.copy(entries, ValueLayout.JAVA_BYTE, entryOffset(slot) + ID_OFFSET, out, 0, ID_LENGTH);
    }

    public long blockOffset(int slot) {
        return entries.get(ValueLayout.JAVA_LONG, entryOffset(slot) + BLOCK_OFFSET_OFFSET);
    }

    /**
     * Points a spilled entry at the block its data is being restored into. Under the lock, before the
     * RESTORING state word is published with a release store.
     */
    public void putBlockOffset(int slot, long blockOffset) {
        entries.set(ValueLayout.JAVA_LONG, entryOffset(slot) + BLOCK_OFFSET_OFFSET, blockOffset);
    }

    public long dataLength(int slot) {
        return entries.get(ValueLayout.JAVA_LONG, entryOffset(slot) + DATA_LENGTH_OFFSET);
    }

    public int metadataLength(int slot) {
        return entries.get(ValueLayout.JAVA_INT, entryOffset(slot) + METADATA_LENGTH_OFFSET);
    }

    public long createTime(int slot) {
        return entries.get(ValueLayout.JAVA_LONG, entryOffset(slot) + CREATE_TIME_OFFSET);
    }

    /**
     * Up to {@code max} slots of SEALED entries whose KEEP flag is {@code kept}, least recently used first. One
     * lock-free scan; the caller validates each slot with a CAS before acting on it.
     */
    public int[] leastRecentlySealed(int max, boolean kept) {
        return leastRecentlySealedAfter(max, kept, Long.MIN_VALUE, -1);
    }

    /**
     * As {@link #leastRecentlySealed}, among the entries that come after ({@code afterUse}, {@code afterSlot}) in
     * the order of (last use, slot): called with the last entry of one batch, it returns the next batch.
     */
    public int[] leastRecentlySealedAfter(int max, boolean kept, long afterUse, int afterSlot) {
        // Max-heap on (last use, slot): keeps the max smallest.
        java.util.PriorityQueue<long[]> newest = new java.util.PriorityQueue<>(max + 1, ObjectIndex::newerFirst);
        for (int slot = 0; slot < slots(); slot++) {
            long sw = stateWordAcquire(slot);
            if (state(sw) != EntryState.SEALED || isKept(sw) != kept) {
                continue;
            }
            long use = lastUseMicros(slot);
            if (use < afterUse || (use == afterUse && slot <= afterSlot)) {
                continue;
            }
            long[] e = {use, slot};
            if (newest.size() < max) {
                newest.add(e);
            } else if (newerFirst(newest.peek(), e) < 0) {
                newest.poll();
                newest.add(e);
            }
        }
        int[] out = new int[newest.size()];
        for (int i = out.length - 1; i >= 0; i--) {
            out[i] = (int) newest.poll()[1];
        }
        return out;
    }

    private static int newerFirst(long[] a, long[] b) {
        int c = Long.compare(b[0], a[0]);
        return c != 0 ? c : Long.compare(b[1], a[1]);
    }

    /** The time of the entry's last recorded use (its seal, or the release of a pin), epoch microseconds. */
    public long lastUseMicros(int slot) {
        return Atomics.getLongOpaque(entries, entryOffset(slot) + LAST_ACCESS_OFFSET);
    }

    /** Sets the entry's last use (epoch microseconds); a hint, so an opaque store (no ordering) is enough. */
    public void touch(int slot, long nowMicros) {
        Atomics.putLongOpaque(entries, entryOffset(slot) + LAST_ACCESS_OFFSET, nowMicros);
    }

    /**
     * Records a use at {@code nowMicros} unless the entry holds one less than {@link #USE_RECORD_INTERVAL_MICROS}
     * older: readers of a hot object then share its cache line instead of taking it from each other on every
     * release. The caller pins the entry, so the slot cannot be given to another object meanwhile.
     */
    public void recordUse(int slot, long nowMicros) {
        long at = entryOffset(slot) + LAST_ACCESS_OFFSET;
        if (nowMicros - Atomics.getLongOpaque(entries, at) >= USE_RECORD_INTERVAL_MICROS) {
            Atomics.putLongOpaque(entries, at, nowMicros);
        }
    }

    /** The wall clock in microseconds since the epoch, the unit of an entry's last use. */
    public static long nowMicros() {
        java.time.Instant now = java.time.Instant.now();
        return now.getEpochSecond() * 1_000_000 + now.getNano() / 1000;
    }
}
