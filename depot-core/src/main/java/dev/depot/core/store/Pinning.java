package dev.depot.core.store;

import static dev.depot.core.index.IndexEntryDescriptor.generation;
import static dev.depot.core.index.IndexEntryDescriptor.state;

import dev.depot.core.clients.ClientTableDescriptor;
import dev.depot.core.clients.PinTable;
import dev.depot.core.index.EntryState;
import dev.depot.core.index.ObjectIndex;

/**
 * Pinning sealed objects, lock-free and without a system call. A pin stores a pin record (volatile) in this
 * client's pin table, then loads the entry's state word (volatile) and checks it is still SEALED with the same
 * generation. A deleter or evictor CASes the state first, then scans the pin records (volatile): one of the two
 * always sees the other. Releasing the last pin on a DELETE_PENDING entry completes the delete.
 */
final class Pinning {
    private final Store store;
    private final ObjectIndex index;
    private final PinTable pins;

    Pinning(Store store, PinTable pins) {
        this.store = store;
        this.index = store.index;
        this.pins = pins;
    }

    /** See {@link Store#tryPin}. */
    Pin tryPin(long w0, long w1, int w2) {
        long evictingSince = 0;
        while (true) {
            long record = index.findSealed(w0, w1, w2);
            if (record == 0) {
                return null;
            }
            int slot = ClientTableDescriptor.pinnedSlot(record);
            int position = pins.pin(record);
            long sw = index.stateWordVolatile(slot);
            if (generation(sw) == (int) record) {
                EntryState st = state(sw);
                if (st == EntryState.SEALED) {
                    // No store to the entry here: the use is recorded when the pin is released (unpin).
                    store.count(ClientTableDescriptor.GETS_OFFSET);
                    return new Pin(record, position);
                }
                // A deleter may have seen this transient pin and deferred: release it as unpin does.
                release(record, position);
                if (st == EntryState.EVICTING) {
                    evictingSince = evictingSince == 0 ? System.nanoTime() : evictingSince;
                    if (!Eviction.yieldWhileEvicting(evictingSince)) {
                        return null;
                    }
                    continue;
                }
                return null;
            }
            pins.unpin(position);
            // The slot was reused between lookup and pin: look again.
        }
    }

    /** See {@link Store#unpin}. */
    void unpin(Pin pin) {
        index.recordUse(ClientTableDescriptor.pinnedSlot(pin.record()), ObjectIndex.nowMicros());
        release(pin.record(), pin.position());
    }

    /** Clears a pin record; completes a deferred delete when this was the last pin on it. */
    private void release(long record, int position) {
        pins.unpin(position);
        store.wakeups.spaceMayHaveFreedIfWaited();
        int slot = ClientTableDescriptor.pinnedSlot(record);
        long sw = index.stateWordVolatile(slot);
        if (state(sw) == EntryState.DELETE_PENDING && generation(sw) == (int) record) {
            store.tryFinishDelete(slot, sw);
        }
    }
}
