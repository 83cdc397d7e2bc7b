package dev.depot.core.store;

import static dev.depot.core.index.IndexEntryDescriptor.generation;
import static dev.depot.core.index.IndexEntryDescriptor.state;
import static dev.depot.core.index.IndexEntryDescriptor.withState;
import static dev.depot.core.store.StoreHeaderDescriptor.PENDING_DELETES_OFFSET;

import dev.depot.core.clients.ClientTableDescriptor;
import dev.depot.core.index.EntryState;
import dev.depot.core.index.ObjectIndex;
import dev.depot.core.memory.Atomics;
import dev.depot.core.notify.EventRecordDescriptor;
import dev.depot.core.sys.FutexWaiter;

/**
 * Deleting objects, deferred while they are pinned. Protocol (each step names what it publishes):
 * <ol>
 *   <li>CAS SEALED to DELETING(me): from now on no new pin succeeds (a pinner re-reads the state after
 *       publishing its record).</li>
 *   <li>Scan every pin record (volatile). None: free the block under the allocation lock. Some: CAS to
 *       DELETE_PENDING and scan again, so that an unpinner that cleared its record between the two and saw
 *       DELETING (not DELETE_PENDING) cannot leave the delete to nobody.</li>
 *   <li>The last unpinner sees DELETE_PENDING and finishes it; the daemon's sweep catches the rest.</li>
 * </ol>
 */
final class Deletion {
    private final Store store;
    private final ObjectIndex index;

    Deletion(Store store) {
        this.store = store;
        this.index = store.index;
    }

    /**
     * Deletes a sealed object: freed now when nobody pins it, else when the last pin goes.
     *
     * @return false when there is no sealed object with this id
     */
    boolean delete(long w0, long w1, int w2) {
        long evictingSince = 0;
        while (true) {
            // SEALED or EVICTING in one scan: an eviction that finds the object pinned puts it back to SEALED.
            long found = index.findSealed(w0, w1, w2);
            if (found == 0) {
                int spilled = deleteSpilled(w0, w1, w2);
                if (spilled == RETRY) {
                    continue;
                }
                return spilled == DELETED;
            }
            int slot = ClientTableDescriptor.pinnedSlot(found);
            long sw = index.stateWordVolatile(slot);
            if (generation(sw) != (int) found || !index.idEquals(slot, w0, w1, w2)) {
                continue;
            }
            if (state(sw) == EntryState.EVICTING) {
                evictingSince = evictingSince == 0 ? System.nanoTime() : evictingSince;
                if (!Eviction.yieldWhileEvicting(evictingSince)) {
                    return false;
                }
                continue;
            }
            if (state(sw) != EntryState.SEALED) {
                continue;
            }
            long deleting = withState(sw, store.me(), EntryState.DELETING);
            if (!index.compareAndSetStateWord(slot, sw, deleting)) {
                continue;
            }
            store.objectEvents.publish(EventRecordDescriptor.TYPE_DELETED, slot);
            finishOrDefer(slot, deleting);
            return true;
        }
    }

    private static final int NONE = 0;
    private static final int DELETED = 1;
    private static final int RETRY = 2;
    /** How long a delete of a spilled object sleeps for a restore in progress before it looks again. */
    private static final long RESTORE_WAIT_NANOS = 10_000_000L;

    /**
     * Deletes a spilled object (SPILLED or RESTORE_WANTED: no pins can exist, no block is held) under the lock;
     * waits for a restore in progress to finish first. The daemon's spiller removes the file when it sees the
     * entry gone.
     */
    private int deleteSpilled(long w0, long w1, int w2) {
        try (FutexWaiter wait = store.sealWaiter(w0, w1, 0, RESTORE_WAIT_NANOS)) {
            while (true) {
                int sequence = wait.sequence();
                int slot = index.findSpilled(w0, w1, w2);
                if (slot < 0) {
                    return wait.counted() ? RETRY : NONE;  // restored while we looked: delete what it sealed
                }
                if (state(index.stateWordVolatile(slot)) != EntryState.RESTORING) {
                    return deleteSpilledUnderLock(w0, w1, w2, slot);
                }
                // The restore ends with a seal of the id's bucket: one sleep for it (a while at most), then retry.
                if (wait.pause(sequence) != FutexWaiter.Pause.COUNTED) {
                    return RETRY;
                }
            }
        }
    }

    private int deleteSpilledUnderLock(long w0, long w1, int w2, int slot) {
        store.heapLock.lockAndRecover();
        try {
            long sw = index.stateWordVolatile(slot);
            if (!state(sw).isSpilled() || !index.idEquals(slot, w0, w1, w2)) {
                return RETRY;
            }
            store.objectEvents.publish(EventRecordDescriptor.TYPE_DELETED, slot);
            store.heapLock.freeEntryUnderLock(slot);
            return DELETED;
        } finally {
            store.heapLock.release();
        }
    }

    /** With the entry in DELETING(me): free it when unpinned, else leave it DELETE_PENDING. */
    private void finishOrDefer(int slot, long deleting) {
        long record = ClientTableDescriptor.pinRecord(slot, generation(deleting));
        if (!store.clients.isPinned(record)) {
            store.heapLock.lockAndRecover();
            try {
                if (index.stateWordVolatile(slot) == deleting) {
                    store.heapLock.freeEntryUnderLock(slot);
                }
            } finally {
                store.heapLock.release();
            }
            return;
        }
        long pending = withState(deleting, 0, EntryState.DELETE_PENDING);
        if (index.compareAndSetStateWord(slot, deleting, pending)) {
            store.addCounter(PENDING_DELETES_OFFSET, 1);
            // Dekker with unpin, which clears its record (volatile) and then loads the state (volatile): an
            // unpinner that ran between our scan and our CAS saw DELETING and left the delete to us. Scanning again
            // after publishing DELETE_PENDING means that one of us always sees the other and finishes it.
            if (!store.clients.isPinned(record)) {
                tryFinishDelete(slot, pending);
            }
        }
    }

    /** Tries to complete a DELETE_PENDING entry whose state word is {@code pending}. */
    void tryFinishDelete(int slot, long pending) {
        long deleting = withState(pending, store.me(), EntryState.DELETING);
        if (index.compareAndSetStateWord(slot, pending, deleting)) {
            store.addCounter(PENDING_DELETES_OFFSET, -1);
            finishOrDefer(slot, deleting);
        }
    }

    /**
     * Completes every deferred delete whose pins are gone. The daemon calls this periodically. The pending
     * count is only a hint (a process killed between a state change and the count's update leaves it off by
     * one), so with {@code always} the index is scanned regardless; the daemon does that once a second.
     */
    void sweep(boolean always) {
        if (!always && Atomics.getLongVolatile(store.header, PENDING_DELETES_OFFSET) <= 0) {
            return;
        }
        for (int slot = 0; slot < index.slots(); slot++) {
            long sw = index.stateWordAcquire(slot);
            if (state(sw) == EntryState.DELETE_PENDING) {
                tryFinishDelete(slot, sw);
            }
        }
    }
}
