package dev.depot.core.store;

import static dev.depot.core.index.IndexEntryDescriptor.hasKnownState;
import static dev.depot.core.index.IndexEntryDescriptor.owner;
import static dev.depot.core.index.IndexEntryDescriptor.state;
import static dev.depot.core.index.IndexEntryDescriptor.withState;
import static dev.depot.core.store.StoreHeaderDescriptor.PENDING_DELETES_OFFSET;

import dev.depot.core.clients.ClientWatch;
import dev.depot.core.index.EntryState;
import dev.depot.core.sys.ProcessIdentity;

/**
 * Returns what a client held to the store: its unsealed objects are reclaimed, its pins dropped and its slot
 * freed. Used for a client that closes, and by the daemon for clients found dead (pid gone, or reused by a
 * process with another start time). Idempotent: a reaper killed half-way is simply run again.
 */
public final class Reaper {
    private final Store store;

    public Reaper(Store store) {
        this.store = store;
    }

    /**
     * Reclaims every registered client whose process is gone, checking each against {@code /proc}, then completes
     * deferred deletes (scanning the whole index when {@code fullSweep}); returns how many clients were reclaimed.
     * For one-off checks (daemon start, {@code depot doctor}); the daemon's rounds use a {@link ClientWatch}.
     */
    public int reapDeadClients(boolean fullSweep) {
        int reaped = 0;
        var clients = store.clients;
        for (int c = 0; c < clients.maxClients(); c++) {
            long identity = clients.identity(c);
            if (identity != 0 && c != store.me() && !ProcessIdentity.isAlive(identity)) {
                reclaimClient(c, identity);
                reaped++;
            }
        }
        return afterReaping(reaped, fullSweep);
    }

    /** As {@link #reapDeadClients(boolean)}, with the dead clients found by {@code watch}. */
    public int reapDeadClients(ClientWatch watch, boolean fullSweep) {
        return afterReaping(watch.findDead(this::reclaimClient), fullSweep);
    }

    /** Frees the rings of dead subscribers and completes deferred deletes; returns {@code reaped}. */
    private int afterReaping(int reaped, boolean fullSweep) {
        var events = store.events();
        if (events != null) {
            events.freeDeadSubscribers();
        }
        store.sweepPendingDeletes(fullSweep || reaped > 0);
        return reaped;
    }

    /** Reclaims client {@code client}, which had {@code identity}. */
    void reclaimClient(int client, long identity) {
        boolean self = client == store.me();
        if (self && !ownsEntries(client)) {
            // A client that only read (the CLI's get, stat, ls) has nothing to settle: it closes without the
            // allocator lock, so a holder that does not let go (a stopped process) cannot keep it from exiting.
            store.clients.clearPins(client);
            if (store.lock.holder() < 0) {
                store.sweepPendingDeletes();
            } // else the daemon's sweep (or the next unpinner) finishes deletes our pins held back
            store.clients.release(client, identity);
            return;
        }
        store.heapLock.lockAndRecover();
        try {
            if (store.clients.identity(client) != identity) {
                return;
            }
            settleEntriesOf(client);
            if (!self) {
                abortEventClaimsOf(client);
                // Under the lock: a process that takes the dead slot over settles it under the lock too, and pins
                // only afterwards, so these cleared records can only be the dead process's.
                store.clients.clearPins(client);
            }
        } finally {
            store.heapLock.release();
        }
        if (self) {
            // The slot is freed only after the lock is released: the lock word names this slot while the client
            // closes itself, and a waiter that saw the slot free would take the holder for dead and steal the lock.
            store.clients.clearPins(client);
            // Deletes that only our pins held back are ours to finish, while our slot is still ours.
            store.sweepPendingDeletes();
        }
        store.clients.release(client, identity);
    }

    /**
     * Settles what the dead previous owner left in the slot this process has just taken over
     * ({@link dev.depot.core.clients.ClientTable#takeOverDead}): its unsealed objects, half-done evictions and
     * deletes, and its pins, exactly as the daemon's reaper would have reclaimed it.
     */
    void settleTakenOverSlot() {
        int me = store.me();
        store.heapLock.lockAndRecover();
        try {
            settleEntriesOf(me);
            store.clients.clearPins(me);
            abortEventClaimsOf(me);
        } finally {
            store.heapLock.release();
        }
        store.sweepPendingDeletes();
    }

    /**
     * Aborts the event records a dead client claimed and never committed (killed mid-publish), before its slot is
     * freed or reused: subscribers would otherwise wait at them for a new owner of the slot that will never commit.
     */
    private void abortEventClaimsOf(int client) {
        var events = store.events();
        if (events != null) {
            events.abortClaimsOf(client);
        }
    }

    /**
     * True when some live index entry names {@code client} as its owner (unsealed, or mid-eviction or mid-delete).
     * Read lock-free; exact for a client that closes itself, since only it makes entries name it.
     */
    private boolean ownsEntries(int client) {
        var index = store.index;
        for (int slot = 0; slot < index.slots(); slot++) {
            long sw = index.rawStateWordVolatile(slot);
            if (owner(sw) != client || !hasKnownState(sw)) {
                continue;  // not ours, or corrupt (not ours to settle: recovery drops it)
            }
            EntryState st = state(sw);
            // The states settleEntriesOf settles: an entry in one of them that names us is ours to settle.
            if (st == EntryState.CREATING || st == EntryState.EVICTING || st == EntryState.DELETING
                || st == EntryState.RESTORING) {
                return true;
            }
        }
        return false;
    }

    /** Under the lock: frees the client's unsealed objects, puts back its evictions, defers its deletes. */
    private void settleEntriesOf(int client) {
        var index = store.index;
        for (int slot = 0; slot < index.slots(); slot++) {
            long sw = index.rawStateWordVolatile(slot);
            if (owner(sw) != client || !hasKnownState(sw)) {
                continue;  // not this client's, or corrupt: recovery drops it
            }
            EntryState st = state(sw);
            switch (st) {
                case CREATING -> store.heapLock.freeEntryUnderLock(slot);
                case EVICTING -> index.putStateWordRelease(slot,
                    withState(sw, 0, EntryState.SEALED));
                // Its block goes back to the heap; the spill file is still whole.
                case RESTORING -> Spilling.returnToSpilledUnderLock(store, slot, sw);
                case DELETING -> {
                    if (index.compareAndSetStateWord(slot, sw,
                        withState(sw, 0, EntryState.DELETE_PENDING))) {
                        store.addCounter(PENDING_DELETES_OFFSET, 1);
                    }
                }
                default -> {
                }
            }
        }
    }
}
