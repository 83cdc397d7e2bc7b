package dev.depot.core.store;

import static dev.depot.core.index.IndexEntryDescriptor.generation;
import static dev.depot.core.index.IndexEntryDescriptor.isKept;
import static dev.depot.core.index.IndexEntryDescriptor.state;
import static dev.depot.core.index.IndexEntryDescriptor.withState;
import static dev.depot.core.store.StoreHeaderDescriptor.*;

import dev.depot.core.clients.ClientTableDescriptor;
import dev.depot.core.heap.HeapBlockDescriptor;
import dev.depot.core.index.EntryState;
import dev.depot.core.index.ObjectIndex;
import dev.depot.core.memory.Atomics;
import dev.depot.core.sys.Native;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;

/**
 * The shared-memory side of spilling KEEP objects to disk, for the daemon's spiller (which does the file I/O,
 * never under the allocator lock). Each step names what it publishes:
 * <ul>
 *   <li>spill: the spiller writes the object's data and metadata to a file while the entry stays SEALED
 *       (immutable, readable meanwhile), renames it into place, then {@link #commitSpill}: under the lock, CAS
 *       SEALED to EVICTING(me), scan pins (Dekker with pinners, as eviction); unpinned: free the block and
 *       publish SPILLED (release); pinned: back to SEALED (the spiller keeps the file as a copy: the object
 *       is immutable).</li>
 *   <li>restore: a reader CASes SPILLED to RESTORE_WANTED and wakes the spiller; {@link #beginRestore} (lock)
 *       allocates a block, points the entry at it and publishes RESTORING(me); the spiller reads the file into
 *       it; {@link #finishRestore} publishes SEALED (release: the data is visible with it) and notifies the
 *       id's seal bucket, which the readers wait on.</li>
 * </ul>
 * A daemon killed mid-spill leaves the entry SEALED (its file, whole or temporary, is discarded at the next
 * start); killed mid-restore leaves RESTORING(dead), which {@link Recovery} turns back into SPILLED.
 */
public final class Spilling {
    /** {@link #beginRestore}: no block could be allocated, even after evicting; spill something and retry. */
    public static final long NO_ROOM = -1;
    /** {@link #beginRestore}: the entry is no longer RESTORE_WANTED (deleted, or restored by another). */
    public static final long GONE = -2;

    private final Store store;
    private final ObjectIndex index;
    private final MemorySegment header;

    Spilling(Store store) {
        this.store = store;
        this.index = store.index;
        this.header = store.header;
    }

    /** Publishes the spill directory and limit, then turns spilling on (release: readers see both with it). */
    public void announce(String directory, long limitBytes) {
        byte[] b = directory.getBytes(StandardCharsets.UTF_8);
        if (b.length > SPILL_DIRECTORY_MAX) {
            throw new IllegalArgumentException("spill directory path of " + b.length + " bytes exceeds the limit of "
                + SPILL_DIRECTORY_MAX + ": " + directory);
        }
        MemorySegment.copy(b, 0, header, ValueLayout.JAVA_BYTE, SPILL_DIRECTORY_OFFSET, b.length);
        Atomics.putIntRelease(header, SPILL_DIRECTORY_LENGTH_OFFSET, b.length);
        Atomics.putLongRelease(header, SPILL_LIMIT_OFFSET, limitBytes);
        Atomics.putIntRelease(header, SPILL_ERROR_OFFSET, 0);
        Atomics.putIntRelease(header, SPILL_STATE_OFFSET, SPILL_STATE_ON);
        // Creates that gave up on a spill while no spiller ran wake up and ask again.
        store.wakeups.spaceMayHaveFreed();
    }

    /** Turns spilling off (the daemon stops); waiting creates wake and give up on a spill. */
    public void withdraw() {
        Atomics.putIntRelease(header, SPILL_STATE_OFFSET, SPILL_STATE_OFF);
        store.wakeups.spaceMayHaveFreed();
    }

    public int requestSequence() {
        return Atomics.getIntVolatile(header, SPILL_REQUEST_SEQUENCE_OFFSET);
    }

    /** Sleeps until a client bumps the request sequence past {@code sequence}, or the time passes. */
    public void awaitRequest(int sequence, long timeoutNanos) {
        Native.futexWait(header.address() + SPILL_REQUEST_SEQUENCE_OFFSET, sequence, timeoutNanos);
    }

    /** Wakes the spiller (to stop it, or after a request made without the store). */
    public void wake() {
        store.spillRequests.wakeSpiller();
    }

    /** The largest block a waiting create asked room for, or 0. */
    public long wantedBytes() {
        return Atomics.getLongVolatile(header, SPILL_WANTED_BYTES_OFFSET);
    }

    /**
     * Clears the request the spiller served (unless a larger one came meanwhile), then wakes every waiting
     * create: one whose request merged into the one served (same size) retries, and asks again if it still
     * does not fit, so no request is lost.
     */
    public void served(long wanted) {
        Atomics.compareAndSetLong(header, SPILL_WANTED_BYTES_OFFSET, wanted, 0);
        store.wakeups.spaceMayHaveFreed();
    }

    /** Records why the spiller cannot help (a {@code SPILL_ERROR_*} code, 0 for none) and wakes waiting creates. */
    public void setError(int code) {
        if (Atomics.getIntVolatile(header, SPILL_ERROR_OFFSET) != code) {
            Atomics.putIntRelease(header, SPILL_ERROR_OFFSET, code);
            store.wakeups.spaceMayHaveFreed();
        }
    }

    /** The {@code SPILL_ERROR_*} code last recorded, 0 for none. */
    public int error() {
        return Atomics.getIntVolatile(header, SPILL_ERROR_OFFSET);
    }

    public long spilledBytes() {
        return Atomics.getLongVolatile(header, SPILLED_BYTES_OFFSET);
    }

    /** True when a block of {@code blockSize} bytes can be allocated now without evicting. Takes the lock. */
    public boolean hasRoomFor(long blockSize) {
        store.heapLock.lockAndRecover();
        try {
            return store.allocator.largestFreeBlock() >= blockSize;
        } finally {
            store.heapLock.release();
        }
    }

    /** Up to {@code max} sealed KEEP entries, least recently used first. One lock-free scan of the index. */
    public int[] spillCandidates(int max) {
        return index.leastRecentlySealed(max, true);
    }

    /** Every entry a reader asked to restore. One lock-free scan of the index. */
    public int[] restoreWanted() {
        int[] out = new int[8];
        int n = 0;
        for (int slot = 0; slot < index.slots(); slot++) {
            if (state(index.stateWordAcquire(slot)) == EntryState.RESTORE_WANTED) {
                if (n == out.length) {
                    out = java.util.Arrays.copyOf(out, n * 2);
                }
                out[n++] = slot;
            }
        }
        return java.util.Arrays.copyOf(out, n);
    }

    public long stateWord(int slot) {
        return index.stateWordVolatile(slot);
    }

    /** The id bytes of a slot. */
    public byte[] id(int slot) {
        byte[] id = new byte[dev.depot.core.index.IndexEntryDescriptor.ID_LENGTH];
        index.readId(slot, id);
        return id;
    }

    public long dataLength(int slot) {
        return index.dataLength(slot);
    }

    public int metadataLength(int slot) {
        return index.metadataLength(slot);
    }

    /** Data then metadata of a live entry with a block, as they lie in its block (bounds checked). */
    public MemorySegment contents(int slot) {
        long start = index.blockOffset(slot) + HeapBlockDescriptor.HEADER_LENGTH;
        long length = index.dataLength(slot) + index.metadataLength(slot);
        dev.depot.core.memory.Bounds.checkRange("contents of index slot " + slot, start, length,
            store.layout.heapLength());
        return store.heap.asSlice(start, length);
    }

    /** What {@link #commitSpill} did. */
    public enum Commit {
        /** The entry stays as it was (pinned, or changed meanwhile): the file is not its data. */
        REFUSED,
        /** The entry is SPILLED (the file is its data) and its block freed. */
        SPILLED,
        /** As SPILLED, and the free made room for the block asked for, as seen under the same lock. */
        MADE_ROOM
    }

    /**
     * With the spill file of the entry that had state word {@code sealed} complete on disk: frees its block and
     * publishes SPILLED, unless it is pinned or changed meanwhile. Under the lock, which also answers whether
     * a block of {@code roomFor} bytes now fits: the creates this free wakes may take that room as soon as the
     * lock is released, so a spiller that asked after it would spill again for room it had already made.
     */
    public Commit commitSpill(int slot, long sealed, long roomFor) {
        store.heapLock.lockAndRecover();
        try {
            if (state(sealed) != EntryState.SEALED || !isKept(sealed)) {
                return Commit.REFUSED;
            }
            long evicting = withState(sealed, store.me(), EntryState.EVICTING);
            if (!index.compareAndSetStateWord(slot, sealed, evicting)) {
                return Commit.REFUSED;
            }
            if (store.clients.isPinned(ClientTableDescriptor.pinRecord(slot, generation(sealed)))) {
                index.putStateWordRelease(slot, sealed);
                return Commit.REFUSED;
            }
            long block = index.blockOffset(slot);
            long size = store.allocator.blockSize(block);
            store.allocator.free(block);
            store.addCounter(KEPT_BYTES_OFFSET, -size);
            store.addCounter(KEPT_OBJECTS_OFFSET, -1);
            store.addCounter(SPILLED_BYTES_OFFSET, size);
            store.addCounter(SPILLED_OBJECTS_OFFSET, 1);
            store.addCounter(SPILL_COUNT_OFFSET, 1);
            index.putStateWordRelease(slot, withState(sealed, 0, EntryState.SPILLED));
            store.objectEvents.publish(dev.depot.core.notify.EventRecordDescriptor.TYPE_SPILLED, slot);
            store.wakeups.spaceMayHaveFreed();  // the waiting creates wake when the lock is released, below
            return store.allocator.largestFreeBlock() >= roomFor ? Commit.MADE_ROOM : Commit.SPILLED;
        } finally {
            store.heapLock.release();
        }
    }

    /**
     * Allocates a block for a RESTORE_WANTED entry (evicting unpinned non-KEEP objects if needed), points the
     * entry at it and publishes RESTORING(me). Under the lock.
     *
     * @return the RESTORING state word, or {@link #NO_ROOM} or {@link #GONE}
     */
    public long beginRestore(int slot, long wanted) {
        store.heapLock.lockAndRecover();
        try {
            if (state(wanted) != EntryState.RESTORE_WANTED || index.stateWordVolatile(slot) != wanted) {
                return GONE;
            }
            long size = HeapBlockDescriptor.blockSizeFor(index.dataLength(slot), index.metadataLength(slot));
            long block = store.allocator.allocate(size);
            if (block < 0) {
                block = new Eviction(store).evictUntilAllocated(size);
            }
            if (block < 0) {
                return NO_ROOM;
            }
            index.putBlockOffset(slot, block);
            store.allocator.setOwner(block, slot);
            long restoring = withState(wanted, store.me(), EntryState.RESTORING);
            // Publishes the block offset with the state: recovery and the reaper read it only after this.
            if (!index.compareAndSetStateWord(slot, wanted, restoring)) {
                store.allocator.free(block);
                return GONE;
            }
            store.addCounter(SPILLED_BYTES_OFFSET, -size);
            store.addCounter(SPILLED_OBJECTS_OFFSET, -1);
            store.addCounter(KEPT_BYTES_OFFSET, size);
            store.addCounter(KEPT_OBJECTS_OFFSET, 1);
            return restoring;
        } finally {
            store.heapLock.release();
        }
    }

    /**
     * The restored data and metadata are in the block: publishes SEALED (release, so a reader that sees it sees
     * the data) and wakes the readers waiting on the id's seal bucket.
     */
    public void finishRestore(int slot, long restoring) {
        long sealed = withState(restoring, 0, EntryState.SEALED);
        // Read while the entry is ours (RESTORING): once sealed, a delete may free the slot for another object.
        var restored = store.objectEvents.draft(dev.depot.core.notify.EventRecordDescriptor.TYPE_RESTORED, slot);
        if (!index.compareAndSetStateWord(slot, restoring, sealed)) {
            throw new IllegalStateException("restored entry in slot " + slot + " changed under its restorer (state word 0x"
                + Long.toHexString(index.stateWordVolatile(slot)) + ")");
        }
        index.touch(slot, ObjectIndex.nowMicros());
        store.addCounter(RESTORE_COUNT_OFFSET, 1);
        store.objectEvents.publish(restored);
        store.wakeups.notifySealed(slot);
    }

    /**
     * Drops a spilled entry whose file is lost or unreadable (logged by the caller): readers stop waiting for it.
     * From RESTORING(me) its block is freed too. Under the lock.
     */
    public void dropLost(int slot, long stateWord) {
        store.heapLock.lockAndRecover();
        try {
            if (index.stateWordVolatile(slot) != stateWord) {
                return;
            }
            if (state(stateWord) == EntryState.RESTORING) {
                // Back to a spilled entry first, so that the shared free path keeps the counters right.
                returnToSpilledUnderLock(store, slot, stateWord);
            }
            store.heapLock.freeEntryUnderLock(slot);
        } finally {
            store.heapLock.release();
        }
        store.wakeups.notifySealed(slot);
    }

    /**
     * Records why the entry {@code (slot, generation)} could not be restored ({@link RestoreFailureDescriptor}
     * kind and reason) and wakes the gets waiting for it, which read it. For a lost object, call before
     * {@link #dropLost}, so that the gets its wake-up ends find the reason.
     */
    public void recordRestoreFailure(int slot, int generation, byte[] id, int kind, String reason) {
        store.restoreFailures.record(slot, generation, id, kind, reason);
        store.wakeups.notifySealed(slot);
    }

    /** Withdraws the failure record of {@code (slot, generation)}: it was restored after all. */
    public void clearRestoreFailure(int slot, int generation) {
        store.restoreFailures.clear(slot, generation);
    }

    /** Counts a spill file the spiller could not write. */
    public void countSpillFailure() {
        store.addCounter(SPILL_FAILURE_COUNT_OFFSET, 1);
    }

    /** Gives a RESTORING entry's block back to the heap and makes it SPILLED again (its file is whole). */
    static void returnToSpilledUnderLock(Store store, int slot, long restoring) {
        var index = store.index;
        long block = index.blockOffset(slot);
        long size = store.allocator.blockSize(block);
        store.allocator.free(block);
        store.addCounter(KEPT_BYTES_OFFSET, -size);
        store.addCounter(KEPT_OBJECTS_OFFSET, -1);
        store.addCounter(SPILLED_BYTES_OFFSET, size);
        store.addCounter(SPILLED_OBJECTS_OFFSET, 1);
        index.putStateWordRelease(slot, withState(restoring, 0, EntryState.SPILLED));
        store.wakeups.spaceMayHaveFreed();
    }

    /**
     * True while the entry in {@code slot} is still the KEEP object of {@code generation}, resident or spilled:
     * its spill file (objects are immutable) is then still its data, and a spill of it needs no write.
     */
    public boolean isKeptObject(int slot, int generation) {
        if (slot < 0 || slot >= index.slots()) {
            return false;
        }
        long sw = index.stateWordVolatile(slot);
        EntryState st = state(sw);
        return generation(sw) == generation && isKept(sw) && (st == EntryState.SEALED || st == EntryState.EVICTING
            || st.isSpilled() || st == EntryState.RESTORING);
    }

    /** True while the entry in {@code slot} is still the spilled object of {@code generation}. */
    public boolean isSpilled(int slot, int generation) {
        if (slot < 0 || slot >= index.slots()) {
            return false;
        }
        long sw = index.stateWordVolatile(slot);
        EntryState st = state(sw);
        return generation(sw) == generation && (st.isSpilled() || st == EntryState.RESTORING);
    }
}
