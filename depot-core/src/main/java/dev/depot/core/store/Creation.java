package dev.depot.core.store;

import static dev.depot.core.index.IndexEntryDescriptor.stateWord;
import static dev.depot.core.store.StoreHeaderDescriptor.KEPT_BYTES_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.KEPT_OBJECTS_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.OBJECT_COUNT_OFFSET;

import dev.depot.core.clients.ClientTableDescriptor;
import dev.depot.core.heap.HeapAllocator;
import dev.depot.core.heap.HeapBlockDescriptor;
import dev.depot.core.index.EntryState;
import dev.depot.core.index.IndexEntryDescriptor;
import dev.depot.core.index.ObjectIndex;
import dev.depot.core.memory.Atomics;
import dev.depot.core.notify.EventRecordDescriptor;
import dev.depot.core.sys.FutexWaiter;
import dev.depot.errors.ObjectExistsException;
import dev.depot.errors.StoreFullException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Creating objects: claim, then commit or abort. Each step names what it publishes:
 * <ul>
 *   <li>create (claim): under the allocator lock, allocate a block (evicting, or waiting for room, when it does
 *       not fit), write the metadata, insert a CREATING(me) entry (release store of the state word publishes
 *       the entry to lock-free readers). The writer then fills the data without the lock.</li>
 *   <li>seal (commit): CAS CREATING(me) to SEALED (volatile; publishes the data the writer wrote to every
 *       reader that acquires the state word), then bump the id's seal bucket and wake waiters.</li>
 *   <li>abort: under the lock, free the block of an entry still CREATING(me).</li>
 * </ul>
 * A client that dies between create and seal leaves CREATING(dead), which {@link Reaper} aborts.
 */
final class Creation {
    /**
     * How long a create that found no room spins on the space sequence before it sleeps on it: about the time a
     * consumer takes over a 1 MiB array, so a producer one step ahead of it does not sleep and wake per object.
     */
    static final long SPACE_SPIN_NANOS = 50_000;

    private final Store store;
    private final StoreLayout layout;
    private final MemorySegment header;
    private final MemorySegment heap;
    private final ObjectIndex index;
    private final HeapAllocator allocator;
    private final int me;

    Creation(Store store) {
        this.store = store;
        this.layout = store.layout;
        this.header = store.header;
        this.heap = store.heap;
        this.index = store.index;
        this.allocator = store.allocator;
        this.me = store.me();
    }

    /** See {@link Store#create(long, long, int, long, byte[], int, long, String)}. */
    long create(long w0, long w1, int w2, long dataLength, byte[] metadata, int flags, long timeoutNanos,
                String idText) {
        if (dataLength < 0) {
            throw new IllegalArgumentException("data size must be >= 0, got " + dataLength);
        }
        if (metadata.length > Store.MAX_METADATA_LENGTH) {
            throw new IllegalArgumentException("metadata of " + metadata.length + " bytes exceeds the limit of "
                + Store.MAX_METADATA_LENGTH);
        }
        // Block size, not data size: a block larger than the heap never fits, so no object may be evicted for it.
        if (dataLength > layout.heapLength()
            || HeapBlockDescriptor.blockSizeFor(dataLength, metadata.length) > layout.heapLength()) {
            throw new StoreFullException("object " + idText + " needs " + dataLength + " bytes but does not fit: it"
                + " is larger than the whole store (capacity " + layout.heapLength() + "); raise --capacity");
        }
        long blockSize = HeapBlockDescriptor.blockSizeFor(dataLength, metadata.length);
        boolean evict = (flags & Store.CREATE_NO_EVICT) == 0;
        int entryFlags = (flags & Store.CREATE_KEEP) != 0 ? IndexEntryDescriptor.FLAG_KEEP : 0;
        CreateFailure failure = new CreateFailure();
        SpillRequests spiller = store.spillRequests;
        try (FutexWaiter wait = store.wakeups.spaceWaiter(evict, SPACE_SPIN_NANOS, timeoutNanos)) {
            while (true) {
                int sequence;
                store.heapLock.lockAndRecover();
                try {
                    long record = tryCreateUnderLock(w0, w1, w2, dataLength, blockSize, metadata, evict, entryFlags,
                        idText, failure);
                    if (record != 0) {
                        store.count(ClientTableDescriptor.CREATES_OFFSET);
                        return record;
                    }
                    // Read under the lock: every free bumps it under the lock, so one after this read ends the wait.
                    sequence = store.wakeups.spaceSequenceVolatile();
                } finally {
                    store.heapLock.release();
                }
                boolean spillCanHelp = failure.spillable() && spiller.spillerIsOn() && spiller.spillerReportsNoError();
                wait.timeoutNanos(timeoutNanos < 0 ? FutexWaiter.FOREVER
                    : Math.max(timeoutNanos, spillCanHelp ? Store.SPILL_WAIT_NANOS : 0));
                if (wait.expired()) {
                    throw failure.exception(idText, dataLength, evict, spiller.spillerIsOn() ? spiller.spillError() : null);
                }
                if (spillCanHelp && wait.counted()) {
                    spiller.requestSpill(blockSize);  // before the sleep that waits for it
                }
                wait.pause(sequence);
            }
        }
    }

    /** One attempt under the lock: the pin record, or 0 with {@code failure} filled in from counters. */
    private long tryCreateUnderLock(long w0, long w1, int w2, long dataLength, long blockSize, byte[] metadata,
                                    boolean evict, int entryFlags, String idText, CreateFailure failure) {
        if (index.findBlocking(w0, w1, w2) >= 0) {
            throw new ObjectExistsException("object " + idText + " exists already; ids are write-once: delete it"
                + " first or use another id");
        }
        if (evict && Atomics.getLongPlain(header, OBJECT_COUNT_OFFSET) >= layout.maxObjects()) {
            // A full index is a full store too: make room by evicting the least recently used object.
            new Eviction(store).evictBytes(1);
        }
        if (Atomics.getLongPlain(header, OBJECT_COUNT_OFFSET) >= layout.maxObjects()) {
            failure.indexFull("the index holds " + layout.maxObjects() + " objects, its maximum; delete objects or"
                + " recreate the store with more --max-objects");
            return 0;
        }
        if (!index.hasRoomFor(w0, w1)) {
            failure.indexFull("the " + IndexEntryDescriptor.MAX_PROBE + " index slots from its home are all taken ("
                + Atomics.getLongPlain(header, OBJECT_COUNT_OFFSET) + " objects in " + index.slots() + " slots);"
                + " delete objects or recreate the store with more --max-objects");
            return 0;
        }
        long block = allocator.allocate(blockSize);
        if (block < 0 && evict) {
            block = new Eviction(store).evictUntilAllocated(blockSize);
        }
        if (block < 0) {
            // Counters only: no scan of the index while every other create and delete waits for this lock.
            failure.heapFull(layout.heapLength(), allocator.usedBytes(), allocator.largestFreeBlock(),
                Atomics.getLongPlain(header, KEPT_BYTES_OFFSET), Atomics.getLongPlain(header, KEPT_OBJECTS_OFFSET));
            return 0;
        }
        long dataStart = block + HeapBlockDescriptor.HEADER_LENGTH;
        MemorySegment.copy(metadata, 0, heap, ValueLayout.JAVA_BYTE, dataStart + dataLength, metadata.length);
        long record = index.insert(w0, w1, w2, block, dataLength, metadata.length, me, entryFlags);
        allocator.setOwner(block, ClientTableDescriptor.pinnedSlot(record));
        store.addCounter(OBJECT_COUNT_OFFSET, 1);
        if (entryFlags != 0) {
            store.addCounter(KEPT_BYTES_OFFSET, blockSize);
            store.addCounter(KEPT_OBJECTS_OFFSET, 1);
        }
        return record;
    }

    /** See {@link Store#seal}. */
    void seal(long record) {
        int slot = ClientTableDescriptor.pinnedSlot(record);
        int gen = (int) record;
        // The flags (KEEP) were set at insert and stay: expect them and keep them.
        long creating = creatingWord(slot, gen);
        // Read while the entry is ours (CREATING): once sealed, a delete may free the slot for another object.
        ObjectEvents.EventDraft sealed = store.objectEvents.draft(EventRecordDescriptor.TYPE_SEALED, slot);
        // The seal is the object's first use; the CAS below publishes it with the data.
        index.touch(slot, ObjectIndex.nowMicros());
        if (!index.compareAndSetStateWord(slot, creating, IndexEntryDescriptor.withState(creating, 0, EntryState.SEALED))) {
            throw new IllegalStateException("cannot seal object in slot " + slot + ": it is no longer being created"
                + " by this client (state word 0x" + Long.toHexString(index.stateWordVolatile(slot)) + ")");
        }
        store.objectEvents.publish(sealed);
        store.wakeups.notifySealed(slot);
        store.wakeups.spaceMayHaveFreedIfWaited();
    }

    /** See {@link Store#abort}. */
    void abort(long record) {
        int slot = ClientTableDescriptor.pinnedSlot(record);
        long creating = creatingWord(slot, (int) record);
        store.heapLock.lockAndRecover();
        try {
            if (index.stateWordVolatile(slot) != creating) {
                throw new IllegalStateException("cannot abort object in slot " + slot + ": not being created by this client");
            }
            store.heapLock.freeEntryUnderLock(slot);
        } finally {
            store.heapLock.release();
        }
    }

    /** The state word of generation {@code gen} being created by this client, with the flags the entry has. */
    private long creatingWord(int slot, int gen) {
        return stateWord(gen, me, EntryState.CREATING, IndexEntryDescriptor.flags(index.stateWordVolatile(slot)));
    }
}
