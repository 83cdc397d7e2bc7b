package dev.depot.core.store;

import static dev.depot.core.store.StoreHeaderDescriptor.FUTEX_WORDS_OFFSET;

import dev.depot.core.clients.ClientTable;
import dev.depot.core.clients.ClientTableDescriptor;
import dev.depot.core.clients.ClientWatch;
import dev.depot.core.clients.PinTable;
import dev.depot.core.heap.HeapAllocator;
import dev.depot.core.index.ObjectIndex;
import dev.depot.core.memory.Atomics;
import dev.depot.core.notify.EventRings;
import dev.depot.core.notify.NotificationDescriptor;
import dev.depot.core.notify.Subscriber;
import dev.depot.core.sys.FutexWaiter;
import dev.depot.core.sys.ProcessIdentity;
import dev.depot.errors.ResourceLimitException;
import dev.depot.errors.StoreFullException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Consumer;

/**
 * One process's handle on a store: the mapping, its regions, and this process's client slot. All object
 * operations of the Java client and the daemon go through here. Thread-safe.
 *
 * <p>Protocol summary (each step says what it publishes and who reads it):
 * <ul>
 *   <li>create ({@link Creation}): under the allocator lock, allocate a block, write the metadata, insert a
 *       CREATING entry (release store of the state word publishes the entry to lock-free readers).</li>
 *   <li>seal ({@link Creation}): CAS CREATING(me) to SEALED (volatile; publishes the data the writer wrote to
 *       every reader that acquires the state word), then bump the id's futex word and wake waiters
 *       ({@link Wakeups}).</li>
 *   <li>pin ({@link Pinning}): store a pin record (volatile), then load the state word (volatile) and check it
 *       is still SEALED with the same generation. A deleter CASes the state first, then scans pin records
 *       (volatile): one of the two always sees the other.</li>
 *   <li>delete ({@link Deletion}): CAS SEALED to DELETING; if no pin records: free under the lock; else
 *       DELETE_PENDING, which the last unpinner (or the daemon's sweep) completes.</li>
 * </ul>
 */
public final class Store implements AutoCloseable {
    /** Largest metadata per object. */
    public static final int MAX_METADATA_LENGTH = 64 * 1024;

    final StoreFile file;
    final StoreLayout layout;
    final MemorySegment header;
    final RestoreFailures restoreFailures;
    final MemorySegment heap;
    final ClientTable clients;
    final ObjectIndex index;
    final HeapAllocator allocator;
    final AllocationLock lock;
    private final int me;
    private final long myIdentity;
    /** This client's slot, for its operation counters. */
    private final MemorySegment mySlot;
    final ObjectEvents objectEvents;
    final HeapLock heapLock;
    final Wakeups wakeups;
    final SpillRequests spillRequests;
    private final Creation creation;
    private final Pinning pinning;
    private final HeapViews heapViews;
    private final Deletion deletion;
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
        this.clients = new ClientTable(file.clientTable(), layout.maxClients(), layout.pinsPerClient());
        this.index = new ObjectIndex(file.index(), layout.indexSlots());
        this.allocator = new HeapAllocator(header, heap);
        this.lock = new AllocationLock(header, clients);
        Atomics.checkAligned(header, FUTEX_WORDS_OFFSET, Integer.BYTES, "futex words");
        Registration r = Registration.claim(clients, kind, file.path().getParent());
        this.me = r.slot();
        this.myIdentity = ProcessIdentity.self();
        this.mySlot = clients.slot(me);
        this.objectEvents = new ObjectEvents(file.notifications(), index, clients, me, directory());
        this.heapLock = new HeapLock(this);
        this.wakeups = new Wakeups(this);
        this.spillRequests = new SpillRequests(this);
        this.creation = new Creation(this);
        this.pinning = new Pinning(this, new PinTable(mySlot, layout.pinsPerClient()));
        this.heapViews = new HeapViews(heap, index, layout, directory());
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

    public MemorySegment header() {
        return header;
    }

    /** {@link #create} flag: fail (or wait) instead of evicting least-recently-used objects. */
    public static final int CREATE_NO_EVICT = 1;
    /** {@link #create} flag: the object is never evicted; a daemon with a spill directory spills it instead. */
    public static final int CREATE_KEEP = 2;
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
        return creation.create(w0, w1, w2, dataLength, metadata, flags, timeoutNanos, idText);
    }

    /** Seals an object this client created: it becomes immutable and visible, and waiters wake. */
    public void seal(long record) {
        checkOpen();
        creation.seal(record);
    }

    /** Aborts an unsealed object this client created: its space is freed at once. */
    public void abort(long record) {
        checkOpen();
        creation.abort(record);
    }

    /** Pins a sealed object; returns null when there is none with this id. Lock-free, no system call. */
    public Pin tryPin(long w0, long w1, int w2) {
        checkOpen();
        return pinning.tryPin(w0, w1, w2);
    }

    /**
     * Releases a pin, recording the use for eviction first (while the pin still holds the entry); completes a
     * deferred delete when this was the last pin on it.
     */
    public void unpin(Pin pin) {
        pinning.unpin(pin);
    }

    /** The object's data, a slice of the one mapping. Bounds are checked: the index is untrusted. */
    public MemorySegment data(int slot) {
        return heapViews.data(slot);
    }

    /** As {@link #data} but read-only, sliced from a read-only view of the heap (one allocation per get). */
    public MemorySegment dataReadOnly(int slot) {
        return heapViews.dataReadOnly(slot);
    }

    /** The object's metadata, a slice of the one mapping. Bounds are checked: the index is untrusted. */
    public MemorySegment metadata(int slot) {
        return heapViews.metadata(slot);
    }

    /** Offset in the store file of an object's data (for clients that map the file themselves). */
    public long dataFileOffset(int slot) {
        return heapViews.dataFileOffset(slot);
    }

    /** How many pin records, of any client, hold this {@code (slot, generation)}. */
    public int pinCount(long record) {
        return clients.countPins(record);
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

    /** True when a live daemon runs a spiller on this store. */
    public boolean spillerIsOn() {
        return spillRequests.spillerIsOn();
    }

    /** The daemon's spill directory as it published it in the header, or null. */
    public String spillDirectory() {
        return spillRequests.spillDirectory();
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
        heapLock.lockAndRecover();
        try {
            return new Eviction(this).evictBytes(bytes);
        } finally {
            heapLock.release();
        }
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

    /** The operations of every client so far (sums of the slots' counters, which outlive their clients). */
    public OperationCounts operationCounts() {
        return new OperationCounts(clients.sumCounter(ClientTableDescriptor.CREATES_OFFSET),
            clients.sumCounter(ClientTableDescriptor.GETS_OFFSET), clients.sumCounter(ClientTableDescriptor.DELETES_OFFSET),
            clients.sumCounter(ClientTableDescriptor.WAITS_OFFSET), clients.sumCounter(ClientTableDescriptor.WAKEUPS_OFFSET));
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
    public void forEachEntry(Consumer<ObjectEntry> sink) {
        checkOpen();
        new StoreSnapshot(this).forEachEntry(sink);
    }

    /** Bytes between the words {@link #preTouchHeap} reads: the smallest page size. */
    public static final long PRE_TOUCH_STRIDE = HeapViews.PRE_TOUCH_STRIDE;

    /**
     * Reads one byte of every page of the heap, so that this process's page table maps all of it now rather
     * than page by page at first use (through a new mapping a first touch costs microseconds per 4 KiB page on
     * a VM). Reads change nothing another process writes; on a shared file mapping the pages are mapped
     * writable. For programs that time their later accesses (the sort demo); returns the pages touched.
     */
    public long preTouchHeap() {
        checkOpen();
        return heapViews.preTouch();
    }

    /**
     * Rebuilds the allocator from the index and settles entries left mid-step by dead clients (daemon start,
     * {@code depot doctor}). Returns the problems found.
     */
    public List<String> recover() {
        checkOpen();
        return heapLock.recover();
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

    int me() {
        return me;
    }

    void addCounter(int offset, long delta) {
        Atomics.getAndAddLong(header, offset, delta);
    }

    /** One more operation of this client ({@code ClientTableDescriptor.*_OFFSET} of a counter): an atomic add. */
    void count(int counterOffset) {
        Atomics.getAndAddLong(mySlot, counterOffset, 1);
    }

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
