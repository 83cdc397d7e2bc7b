package dev.depot.core.store;

import static dev.depot.core.index.IndexEntryDescriptor.generation;
import static dev.depot.core.index.IndexEntryDescriptor.state;
import static dev.depot.core.index.IndexEntryDescriptor.stateWord;
import static dev.depot.core.store.StoreHeaderDescriptor.*;

import dev.depot.core.clients.ClientTable;
import dev.depot.core.clients.ClientTableDescriptor;
import dev.depot.core.clients.ClientWatch;
import dev.depot.core.clients.PinTable;
import dev.depot.core.heap.HeapAllocator;
import dev.depot.core.heap.HeapBlockDescriptor;
import dev.depot.core.index.EntryState;
import dev.depot.core.index.IndexEntryDescriptor;
import dev.depot.core.index.ObjectIndex;
import dev.depot.core.memory.Atomics;
import dev.depot.core.notify.EventRecordDescriptor;
import dev.depot.core.notify.EventRings;
import dev.depot.core.notify.NotificationDescriptor;
import dev.depot.core.notify.Subscriber;
import dev.depot.core.sys.FutexWaiter;
import dev.depot.core.sys.Native;
import dev.depot.core.sys.ProcessIdentity;
import dev.depot.errors.DepotException;
import dev.depot.errors.ErrorCode;
import dev.depot.errors.ObjectExistsException;
import dev.depot.errors.ResourceLimitException;
import dev.depot.errors.StoreFullException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Consumer;

/**
 * One process's handle on a store: the mapping, its regions, and this process's client slot. All object
 * operations of the Java client and the daemon go through here. Thread-safe.
 *
 * <p>Protocol summary (each step says what it publishes and who reads it):
 * <ul>
 *   <li>create: under the allocator lock, allocate a block, write the metadata, insert a CREATING entry
 *       (release store of the state word publishes the entry to lock-free readers).</li>
 *   <li>seal: CAS CREATING(me) to SEALED (volatile; publishes the data the writer wrote to every reader that
 *       acquires the state word), then bump the id's futex word and wake waiters.</li>
 *   <li>pin: store a pin record (volatile), then load the state word (volatile) and check it is still SEALED
 *       with the same generation. A deleter CASes the state first, then scans pin records (volatile): one of
 *       the two always sees the other.</li>
 *   <li>delete: CAS SEALED to DELETING; if no pin records: free under the lock; else DELETE_PENDING, which
 *       the last unpinner (or the daemon's sweep) completes.</li>
 * </ul>
 */
public final class Store implements AutoCloseable {
    /** Largest metadata per object. */
    public static final int MAX_METADATA_LENGTH = 64 * 1024;
    /** How long a reader waits for an EVICTING entry to settle before calling it missing. */
    private static final long EVICTING_WAIT_NANOS = 50_000_000L;

    final StoreFile file;
    final StoreLayout layout;
    final MemorySegment header;
    final RestoreFailures restoreFailures;
    final MemorySegment heap;
    private final MemorySegment heapReadOnly;
    final ClientTable clients;
    final ObjectIndex index;
    final HeapAllocator allocator;
    final AllocationLock lock;
    private final int me;
    private final long myIdentity;
    private final PinTable pins;
    /** This client's slot, for its operation counters. */
    private final MemorySegment mySlot;
    final ObjectEvents objectEvents;
    private final Deletion deletion;
    final Wakeups wakeups;
    final SpillRequests spillRequests;
    private volatile boolean closed;
    /** False for a {@link #openSession session}: the mapping belongs to the store that opened it. */
    private final boolean ownsFile;

    private Store(StoreFile file, int kind, boolean ownsFile) {
        this.file = file;
        this.ownsFile = ownsFile;
        this.layout = file.layout();
        this.header = file.header();
        this.restoreFailures = new RestoreFailures(header);
        this.heap = file.heap();
        this.heapReadOnly = heap.asReadOnly();
        this.clients = new ClientTable(file.clientTable(), layout.maxClients(), layout.pinsPerClient());
        this.index = new ObjectIndex(file.index(), layout.indexSlots());
        this.allocator = new HeapAllocator(header, heap);
        this.lock = new AllocationLock(header, clients);
        Atomics.checkAligned(header, FUTEX_WORDS_OFFSET, Integer.BYTES, "futex words");
        Registration r = Registration.claim(clients, kind, file.path().getParent());
        this.me = r.slot();
        this.myIdentity = ProcessIdentity.self();
        this.pins = new PinTable(clients.slot(me), layout.pinsPerClient());
        this.mySlot = clients.slot(me);
        this.objectEvents = new ObjectEvents(file.notifications(), index, clients, me, directory());
        this.wakeups = new Wakeups(this);
        this.spillRequests = new SpillRequests(this);
        this.deletion = new Deletion(this);
        if (r.tookOverDeadSlot()) {
            try {
                new Reaper(this).settleTakenOverSlot();
            } catch (RuntimeException | Error e) {
                clients.release(me, myIdentity);
                throw e;
            }
        }
    }

    /** Opens an existing store and registers this process as a client. */
    public static Store open(Path dir, int kind) throws IOException {
        StoreFile f = StoreFile.open(dir);
        try {
            return new Store(f, kind, true);
        } catch (RuntimeException e) {
            f.close();
            throw e;
        }
    }

    /** Creates a new store with {@code layout} and registers this process. */
    public static Store create(Path dir, StoreLayout layout, int kind) throws IOException {
        StoreFile f = StoreFile.create(dir, layout);
        try {
            return new Store(f, kind, true);
        } catch (RuntimeException e) {
            f.close();
            throw e;
        }
    }

    /**
     * Registers another client slot of this process over the same mapping (no new mapping): a session has its
     * own pins and unsealed objects, released when it closes. The daemon gives each control-protocol connection
     * one, so every Python client is a client of the store with a pin table of its own.
     */
    public Store openSession(int kind) {
        checkOpen();
        return new Store(file, kind, false);
    }

    public int clientSlot() {
        return me;
    }

    public StoreLayout layout() {
        return layout;
    }

    public Path directory() {
        return file.path().getParent();
    }

    /** The store file's length now ({@link StoreFile#currentLength}): below the layout's means truncated. */
    public long fileLengthNow() {
        return file.currentLength();
    }

    /** The shared-memory steps of spilling and restoring, for the daemon's spiller. */
    public Spilling spilling() {
        checkOpen();
        return new Spilling(this);
    }

    public ClientTable clients() {
        return clients;
    }

    public ObjectIndex index() {
        return index;
    }

    /** {@link #create} flag: fail (or wait) instead of evicting least-recently-used objects. */
    public static final int CREATE_NO_EVICT = 1;
    /** {@link #create} flag: the object is never evicted; a daemon with a spill directory spills it instead. */
    public static final int CREATE_KEEP = 2;
    /**
     * How long a create that found no room spins on the space sequence before it sleeps on it: about the time a
     * consumer takes over a 1 MiB array, so a producer one step ahead of it does not sleep and wake per object.
     */
    static final long SPACE_SPIN_NANOS = 50_000;
    /** How long a create that only a spill can satisfy waits for the daemon's spiller at most. */
    public static final long SPILL_WAIT_NANOS = 60_000_000_000L;

    /**
     * Creates an unsealed object and returns its pin record {@code (slot, generation)}; the caller owns it until
     * {@link #seal} or {@link #abort}. Does not wait for room (except for a spill, see below).
     */
    public long create(long w0, long w1, int w2, long dataLength, byte[] metadata, boolean evict, String idText) {
        return create(w0, w1, w2, dataLength, metadata, evict ? 0 : CREATE_NO_EVICT, 0, idText);
    }

    /**
     * Creates an unsealed object and returns its pin record {@code (slot, generation)}. When it does not fit
     * (after evicting, unless {@link #CREATE_NO_EVICT}), waits up to {@code timeoutNanos} (negative: forever) for
     * deletes, releases, evictions or spills to make room: asleep on the space futex word, which every free bumps.
     * When the room can only come from spilling KEEP objects and the daemon spills, waits for that too, up to
     * {@link #SPILL_WAIT_NANOS} even when {@code timeoutNanos} is 0, unless the spiller reports that it cannot.
     *
     * @throws StoreFullException when there is no room by then; its figures come from counters, not a scan
     */
    public long create(long w0, long w1, int w2, long dataLength, byte[] metadata, int flags, long timeoutNanos,
                       String idText) {
        checkOpen();
        if (dataLength < 0) {
            throw new IllegalArgumentException("data size must be >= 0, got " + dataLength);
        }
        if (metadata.length > MAX_METADATA_LENGTH) {
            throw new IllegalArgumentException("metadata of " + metadata.length + " bytes exceeds the limit of "
                + MAX_METADATA_LENGTH);
        }
        // Block size, not data size: a block larger than the heap never fits, so no object may be evicted for it.
        if (dataLength > layout.heapLength()
            || HeapBlockDescriptor.blockSizeFor(dataLength, metadata.length) > layout.heapLength()) {
            throw new StoreFullException("object " + idText + " needs " + dataLength + " bytes but does not fit: it"
                + " is larger than the whole store (capacity " + layout.heapLength() + "); raise --capacity");
        }
        long blockSize = HeapBlockDescriptor.blockSizeFor(dataLength, metadata.length);
        boolean evict = (flags & CREATE_NO_EVICT) == 0;
        int entryFlags = (flags & CREATE_KEEP) != 0 ? IndexEntryDescriptor.FLAG_KEEP : 0;
        CreateFailure failure = new CreateFailure();
        try (FutexWaiter wait = wakeups.spaceWaiter(evict, SPACE_SPIN_NANOS, timeoutNanos)) {
            while (true) {
                int sequence;
                lockAndRecover();
                try {
                    long record = tryCreateUnderLock(w0, w1, w2, dataLength, blockSize, metadata, evict, entryFlags,
                        idText, failure);
                    if (record != 0) {
                        count(ClientTableDescriptor.CREATES_OFFSET);
                        return record;
                    }
                    // Read under the lock: every free bumps it under the lock, so one after this read ends the wait.
                    sequence = wakeups.spaceSequenceVolatile();
                } finally {
                    lock.release(me);
                }
                boolean spillCanHelp = failure.spillable() && spillerIsOn()
                    && spillRequests.spillerReportsNoError();
                wait.timeoutNanos(timeoutNanos < 0 ? FutexWaiter.FOREVER
                    : Math.max(timeoutNanos, spillCanHelp ? SPILL_WAIT_NANOS : 0));
                if (wait.expired()) {
                    throw failure.exception(idText, dataLength, evict, spillerIsOn() ? spillRequests.spillError() : null);
                }
                if (spillCanHelp && wait.counted()) {
                    spillRequests.requestSpill(blockSize);  // before the sleep that waits for it
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
            new Eviction(this).evictBytes(1);
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
            block = new Eviction(this).evictUntilAllocated(blockSize);
        }
        if (block < 0) {
            // Counters only: no scan of the index while every other create and delete waits for this lock.
            failure.heapFull(layout.heapLength(), allocator.usedBytes(), allocator.largestFreeBlock(),
                Atomics.getLongPlain(header, KEPT_BYTES_OFFSET), Atomics.getLongPlain(header, KEPT_OBJECTS_OFFSET));
            return 0;
        }
        long dataStart = block + HeapBlockDescriptor.HEADER_LENGTH;
        MemorySegment.copy(metadata, 0, heap, java.lang.foreign.ValueLayout.JAVA_BYTE, dataStart + dataLength,
            metadata.length);
        long record = index.insert(w0, w1, w2, block, dataLength, metadata.length, me, entryFlags);
        allocator.setOwner(block, ClientTableDescriptor.pinnedSlot(record));
        addCounter(OBJECT_COUNT_OFFSET, 1);
        if (entryFlags != 0) {
            addCounter(KEPT_BYTES_OFFSET, blockSize);
            addCounter(KEPT_OBJECTS_OFFSET, 1);
        }
        return record;
    }

    /** True when a live daemon runs a spiller on this store. */
    public boolean spillerIsOn() {
        return spillRequests.spillerIsOn();
    }

    /** The daemon's spill directory as it published it in the header, or null. */
    public String spillDirectory() {
        return spillRequests.spillDirectory();
    }

    /** Seals an object this client created: it becomes immutable and visible, and waiters wake. */
    public void seal(long record) {
        checkOpen();
        int slot = ClientTableDescriptor.pinnedSlot(record);
        int gen = (int) record;
        // The flags (KEEP) were set at insert and stay: expect them and keep them.
        long creating = creatingWord(slot, gen);
        // Read while the entry is ours (CREATING): once sealed, a delete may free the slot for another object.
        ObjectEvents.EventDraft sealed = objectEvents.draft(EventRecordDescriptor.TYPE_SEALED, slot);
        // The seal is the object's first use; the CAS below publishes it with the data.
        index.touch(slot, ObjectIndex.nowMicros());
        if (!index.compareAndSetStateWord(slot, creating, IndexEntryDescriptor.withState(creating, 0, EntryState.SEALED))) {
            throw new IllegalStateException("cannot seal object in slot " + slot + ": it is no longer being created"
                + " by this client (state word 0x" + Long.toHexString(index.stateWordVolatile(slot)) + ")");
        }
        objectEvents.publish(sealed);
        wakeups.notifySealed(slot);
        wakeups.spaceMayHaveFreedIfWaited();
    }

    /**
     * Starts a wait for a seal of {@code (w0, w1)} ({@link FutexWaiter}: read its sequence, look the id up, pause):
     * on the futex word of the id's bucket, chosen by its home slot on both sides, so a seal of another id of the
     * bucket also wakes it and the caller looks again. Once counted, the caller is among the seal waiters until it
     * closes the wait: while any is, every seal wakes the bucket it seals in (Dekker with
     * {@link Wakeups#notifySealed}, which bumps the word and then reads the count). A get stays counted across its
     * looks, so that the look right after a wake-up does not wait for the count's cache line first. Its first count
     * adds to this client's waits.
     */
    public FutexWaiter sealWaiter(long w0, long w1, long spinNanos, long timeoutNanos) {
        return wakeups.sealWaiter(w0, w1, spinNanos, timeoutNanos);
    }

    /** Aborts an unsealed object this client created: its space is freed at once. */
    public void abort(long record) {
        checkOpen();
        int slot = ClientTableDescriptor.pinnedSlot(record);
        long creating = creatingWord(slot, (int) record);
        lockAndRecover();
        try {
            if (index.stateWordVolatile(slot) != creating) {
                throw new IllegalStateException("cannot abort object in slot " + slot + ": not being created by this client");
            }
            freeEntryUnderLock(slot);
        } finally {
            lock.release(me);
        }
    }

    /** The state word of generation {@code gen} being created by this client, with the flags the entry has. */
    private long creatingWord(int slot, int gen) {
        return stateWord(gen, me, EntryState.CREATING, IndexEntryDescriptor.flags(index.stateWordVolatile(slot)));
    }

    /** Frees a live entry's block and removes the entry. Under the lock. */
    void freeEntryUnderLock(int slot) {
        long sw = index.stateWordVolatile(slot);
        if (state(sw).isSpilled()) {
            addCounter(SPILLED_BYTES_OFFSET, -HeapBlockDescriptor.blockSizeFor(index.dataLength(slot),
                index.metadataLength(slot)));
            addCounter(SPILLED_OBJECTS_OFFSET, -1);
        } else {
            long block = index.blockOffset(slot);
            if (IndexEntryDescriptor.isKept(sw)) {
                addCounter(KEPT_BYTES_OFFSET, -allocator.blockSize(block));
                addCounter(KEPT_OBJECTS_OFFSET, -1);
            }
            allocator.free(block);
        }
        index.remove(slot);
        addCounter(OBJECT_COUNT_OFFSET, -1);
        wakeups.spaceMayHaveFreed();
    }

    /** Pins a sealed object; returns null when there is none with this id. Lock-free, no system call. */
    public Pin tryPin(long w0, long w1, int w2) {
        checkOpen();
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
                    count(ClientTableDescriptor.GETS_OFFSET);
                    return new Pin(record, position);
                }
                // A deleter may have seen this transient pin and deferred: release it as unpin does.
                release(record, position);
                if (st == EntryState.EVICTING) {
                    evictingSince = evictingSince == 0 ? System.nanoTime() : evictingSince;
                    if (!yieldWhileEvicting(evictingSince)) {
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

    /** {@link #requestRestore}: no spilled object has this id. */
    public static final int NOT_SPILLED = 0;
    /** {@link #requestRestore}: the object is spilled and being restored; wait for its seal notification. */
    public static final int RESTORE_UNDER_WAY = 1;
    /** {@link #requestRestore}: the object is spilled but no live daemon spills and restores. */
    public static final int RESTORE_IMPOSSIBLE = 2;

    /**
     * When a spilled object has this id, asks the daemon's spiller to restore it: CAS SPILLED to RESTORE_WANTED
     * (so concurrent readers ask once) and wake the spiller. The restore ends with a seal notification of the
     * id's bucket, which {@link #sealWaiter} waits for. Lock-free.
     */
    public int requestRestore(long w0, long w1, int w2) {
        checkOpen();
        return spillRequests.requestRestore(w0, w1, w2);
    }

    /**
     * The entry of the spilled (or being restored) object with this id, as {@code slot << 32 | generation}, or -1
     * when there is none. A get that waits for a restore remembers it, to find the restore's failure record
     * ({@link #restoreFailure}) if the entry goes. Lock-free.
     */
    public long spilledEntry(long w0, long w1, int w2) {
        checkOpen();
        return spillRequests.spilledEntry(w0, w1, w2);
    }

    /**
     * Why the daemon could not restore the spilled entry {@code entry} ({@link #spilledEntry}), or null when it
     * reported no failure for it. Lock-free.
     */
    public RestoreFailures.Failure restoreFailure(long entry) {
        checkOpen();
        return spillRequests.restoreFailure(entry);
    }

    /**
     * Lets an eviction in progress settle (it frees the object or puts it back within its pin scan); false once
     * it has taken longer than {@link #EVICTING_WAIT_NANOS} since {@code since}, which only a stuck evictor does.
     */
    static boolean yieldWhileEvicting(long since) {
        if (System.nanoTime() - since > EVICTING_WAIT_NANOS) {
            return false;
        }
        Thread.yield();
        return true;
    }

    /**
     * Releases a pin, recording the use for eviction first (while the pin still holds the entry); completes a
     * deferred delete when this was the last pin on it.
     */
    public void unpin(Pin pin) {
        index.recordUse(ClientTableDescriptor.pinnedSlot(pin.record()), ObjectIndex.nowMicros());
        release(pin.record(), pin.position());
    }

    /** Clears a pin record; completes a deferred delete when this was the last pin on it. */
    private void release(long record, int position) {
        pins.unpin(position);
        wakeups.spaceMayHaveFreedIfWaited();
        int slot = ClientTableDescriptor.pinnedSlot(record);
        long sw = index.stateWordVolatile(slot);
        if (state(sw) == EntryState.DELETE_PENDING && generation(sw) == (int) record) {
            tryFinishDelete(slot, sw);
        }
    }

    /** The object's data, a slice of the one mapping. Bounds are checked: the index is untrusted. */
    public MemorySegment data(int slot) {
        return heap.asSlice(checkedDataStart(slot), index.dataLength(slot));
    }

    /** As {@link #data} but read-only, sliced from a read-only view of the heap (one allocation per get). */
    public MemorySegment dataReadOnly(int slot) {
        return heapReadOnly.asSlice(checkedDataStart(slot), index.dataLength(slot));
    }

    private long checkedDataStart(int slot) {
        long block = index.blockOffset(slot);
        checkFits(slot, block);
        return block + HeapBlockDescriptor.HEADER_LENGTH;
    }

    public MemorySegment metadata(int slot) {
        long block = index.blockOffset(slot);
        checkFits(slot, block);
        return heap.asSlice(block + HeapBlockDescriptor.HEADER_LENGTH + index.dataLength(slot), index.metadataLength(slot));
    }

    /**
     * The index is untrusted: an entry whose block (data and metadata) does not lie inside the heap is corruption,
     * reported naming the slot, the same check recovery drops such entries by.
     */
    private void checkFits(int slot, long block) {
        String misfit = Recovery.misfit(slot, block, index.dataLength(slot), index.metadataLength(slot), layout.heapLength());
        if (misfit != null) {
            throw new dev.depot.errors.StoreFormatException("the store at " + directory() + " is corrupt: " + misfit
                + "; run `depot doctor` to drop the entry");
        }
    }

    /** Offset in the store file of an object's data (for clients that map the file themselves). */
    public long dataFileOffset(int slot) {
        return layout.heapOffset() + index.blockOffset(slot) + HeapBlockDescriptor.HEADER_LENGTH;
    }

    /**
     * Deletes a sealed object: freed now when nobody pins it, else when the last pin goes.
     *
     * @return false when there is no sealed object with this id
     */
    public boolean delete(long w0, long w1, int w2) {
        checkOpen();
        boolean deleted = deletion.delete(w0, w1, w2);
        if (deleted) {
            count(ClientTableDescriptor.DELETES_OFFSET);
        }
        return deleted;
    }

    /** One more operation of this client ({@code ClientTableDescriptor.*_OFFSET} of a counter): an atomic add. */
    void count(int counterOffset) {
        Atomics.getAndAddLong(mySlot, counterOffset, 1);
    }

    /** The operations of every client so far (sums of the slots' counters, which outlive their clients). */
    public OperationCounts operationCounts() {
        return new OperationCounts(clients.sumCounter(ClientTableDescriptor.CREATES_OFFSET),
            clients.sumCounter(ClientTableDescriptor.GETS_OFFSET), clients.sumCounter(ClientTableDescriptor.DELETES_OFFSET),
            clients.sumCounter(ClientTableDescriptor.WAITS_OFFSET), clients.sumCounter(ClientTableDescriptor.WAKEUPS_OFFSET));
    }

    /** Subscribers now, live or dead and not yet reaped (0 when the store has no notification region). */
    public int subscriberCount() {
        return objectEvents.subscriberCount();
    }

    /** The notification rings, or null when the store's format (1.1) has none. */
    EventRings events() {
        return objectEvents.rings();
    }

    /**
     * Subscribes this process to every object event of the store from now on ({@link Subscriber}).
     *
     * @throws ResourceLimitException when all {@link NotificationDescriptor#SUBSCRIBERS} subscriber slots are taken
     */
    public Subscriber subscribe() {
        checkOpen();
        return objectEvents.subscribe();
    }

    /** Tries to complete a DELETE_PENDING entry whose state word is {@code pending}. */
    void tryFinishDelete(int slot, long pending) {
        deletion.tryFinishDelete(slot, pending);
    }

    /** Completes every deferred delete whose pins are gone (see {@link Deletion#sweep}). */
    public void sweepPendingDeletes() {
        deletion.sweep(false);
    }

    /** As {@link #sweepPendingDeletes()}; with {@code always}, ignores the pending count and scans the index. */
    public void sweepPendingDeletes(boolean always) {
        deletion.sweep(always);
    }

    /** Evicts least-recently-used unpinned sealed objects until {@code bytes} are freed or none is left. */
    public long evict(long bytes) {
        checkOpen();
        lockAndRecover();
        try {
            return new Eviction(this).evictBytes(bytes);
        } finally {
            lock.release(me);
        }
    }

    /**
     * Takes the allocator lock, rebuilding the heap first when the previous holder died holding it.
     *
     * @throws dev.depot.errors.StoreBusyException when a live holder keeps it beyond the wait limit
     */
    void lockAndRecover() {
        if (lock.acquire(me)) {
            rebuildOrHandOn();
        }
    }

    /** As {@link #lockAndRecover} but gives up (false) when a live holder keeps the lock {@code timeoutNanos}. */
    boolean tryLockAndRecover(long timeoutNanos) {
        AllocationLock.Acquisition a = lock.tryAcquire(me, timeoutNanos);
        if (a == AllocationLock.Acquisition.ACQUIRED_MUST_REBUILD) {
            rebuildOrHandOn();
        }
        return a != AllocationLock.Acquisition.TIMED_OUT;
    }

    /** Rebuilds under the lock; if that fails, releases the lock marked for the next holder to rebuild. */
    private List<String> rebuildOrHandOn() {
        try {
            return new Recovery(this).rebuildUnderLock();
        } catch (RuntimeException | Error e) {
            lock.releaseForRebuild(me);
            throw e;
        }
    }

    /**
     * Rebuilds the allocator from the index and settles entries left mid-step by dead clients (daemon start,
     * {@code depot doctor}). Returns the problems found.
     */
    public List<String> recover() {
        checkOpen();
        lock.acquire(me);
        List<String> problems = rebuildOrHandOn();
        lock.release(me);
        return problems;
    }

    /** Reclaims clients whose processes died and completes deferred deletes; returns how many were reclaimed. */
    public int reapDeadClients() {
        checkOpen();
        return new Reaper(this).reapDeadClients(false);
    }

    /** As {@link #reapDeadClients()}, and scans the whole index for deferred deletes to complete. */
    public int reapDeadClientsAndSweep() {
        checkOpen();
        return new Reaper(this).reapDeadClients(true);
    }

    /**
     * As {@link #reapDeadClients()}, with the dead clients found by {@code watch} (the daemon's reaper, every
     * round), and with a scan of the whole index for deferred deletes when {@code fullSweep}.
     */
    public int reapDeadClients(ClientWatch watch, boolean fullSweep) {
        checkOpen();
        return new Reaper(this).reapDeadClients(watch, fullSweep);
    }

    /**
     * A watch over this store's other clients for the daemon's reaper ({@link ClientWatch}), owned by the calling
     * thread; {@code log} is told once when pidfds cannot be had.
     */
    public ClientWatch watchClients(Consumer<String> log) {
        checkOpen();
        return new ClientWatch(clients, me, true, log);
    }

    void releaseLock() {
        lock.release(me);
    }

    int me() {
        return me;
    }

    void addCounter(int offset, long delta) {
        Atomics.getAndAddLong(header, offset, delta);
    }

    /** Figures of the store. Reads the free lists under the lock, the rest lock-free. */
    public StoreStatistics statistics() {
        checkOpen();
        return new StoreSnapshot(this).statistics();
    }

    /** A snapshot of every live entry. */
    public List<ObjectEntry> list() {
        checkOpen();
        return new StoreSnapshot(this).list();
    }

    /** Hands every live entry to {@code sink}, in index order, without holding the listing. */
    public void forEachEntry(java.util.function.Consumer<ObjectEntry> sink) {
        checkOpen();
        new StoreSnapshot(this).forEachEntry(sink);
    }

    /** How many pin records, of any client, hold this {@code (slot, generation)}. */
    public int pinCount(long record) {
        return clients.countPins(record);
    }

    public MemorySegment header() {
        return header;
    }

    /** Bytes between the words {@link #preTouchHeap} reads: the smallest page size. */
    public static final long PRE_TOUCH_STRIDE = 4096;

    /**
     * Reads one byte of every page of the heap, so that this process's page table maps all of it now rather
     * than page by page at first use (through a new mapping a first touch costs microseconds per 4 KiB page on
     * a VM). Reads change nothing another process writes; on a shared file mapping the pages are mapped
     * writable. For programs that time their later accesses (the sort demo); returns the pages touched.
     */
    public long preTouchHeap() {
        checkOpen();
        long pages = 0;
        byte seen = 0;
        for (long at = 0; at < heap.byteSize(); at += PRE_TOUCH_STRIDE) {
            seen |= heap.get(ValueLayout.JAVA_BYTE, at);
            pages++;
        }
        preTouchSink = seen;  // kept, so the reads are not optimised away
        return pages;
    }

    @SuppressWarnings("unused")
    private volatile byte preTouchSink;

    public boolean isClosed() {
        return closed;
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("store " + directory() + " is closed");
        }
    }

    /**
     * Unregisters this process (its pins are dropped, its unsealed objects are aborted) and unmaps the store.
     * The caller must have closed its views and writers first.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            new Reaper(this).reclaimClient(me, myIdentity);
        } finally {
            if (ownsFile) {
                file.close();
            }
        }
    }
}
