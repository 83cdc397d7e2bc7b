package dev.depot.client;

import dev.depot.core.clients.ClientTableDescriptor;
import dev.depot.core.index.EntryState;
import dev.depot.core.store.ObjectEntry;
import dev.depot.core.store.Pin;
import dev.depot.core.store.RestoreFailures;
import dev.depot.core.store.Store;
import dev.depot.core.store.Timeouts;
import dev.depot.core.sys.FutexWaiter;
import dev.depot.errors.DepotException;
import dev.depot.errors.ObjectLostException;
import dev.depot.errors.ObjectMissingException;
import dev.depot.errors.StoreFullException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A process's connection to a Depot store. The store is mapped once, at open; every operation then works on
 * shared memory directly: gets look objects up and pin them with atomics (no socket, no daemon), creates take
 * a short lock in shared memory, waits block on a futex. Thread-safe; {@link ObjectView}s and
 * {@link ObjectWriter}s are each for one thread.
 *
 * <pre>{@code
 * try (DepotClient depot = DepotClient.open(dir)) {
 *     ObjectId id = ObjectId.of("dataset/part-7");
 *     try (ObjectWriter w = depot.create(id, 1024)) {
 *         w.data().fill((byte) 7);
 *         w.seal();
 *     }
 *     try (ObjectView v = depot.get(id, 1000)) {
 *         long n = v.size();
 *     }
 * }
 * }</pre>
 */
public final class DepotClient implements AutoCloseable {
    /** Passed to {@link #create(ObjectId, long, byte[], CreateOption...)}. */
    public enum CreateOption {
        /** Fail (or wait, with a timeout) instead of evicting least-recently-used objects. */
        NO_EVICT,
        /**
         * Never evict this object. When room is needed, a daemon started with a spill directory writes it to
         * disk and frees its memory; a get restores it. Without a spill directory it stays in memory until
         * deleted.
         */
        KEEP
    }

    private static final byte[] NO_METADATA = new byte[0];
    /** How long a waiting get spins on the futex word before it sleeps on it, at least. */
    private static final long SPIN_BEFORE_SLEEP_NANOS = 20_000;
    /**
     * How long it spins at most: a get spins up to twice the wait that last ended in a seal, within these bounds,
     * so a consumer whose producer seals every ~100 µs (a lock-step hand-off) meets each seal awake instead of
     * paying a sleep and a wake-up (20-50 µs here) each time, while one that waits milliseconds sleeps after 20 µs.
     */
    private static final long MAX_SPIN_BEFORE_SLEEP_NANOS = 200_000;

    /** Read by {@code dev.depot.client.internal.StoreClients} through a private lookup: keep its name and type. */
    private final Store store;
    private final Set<ObjectWriter> openWriters = ConcurrentHashMap.newKeySet();
    private final Set<Subscription> openSubscriptions = ConcurrentHashMap.newKeySet();
    private final AtomicInteger openViews = new AtomicInteger();
    /**
     * The client's own hold on the mapping plus one per view that {@linkplain ObjectView#holdMapping holds it}:
     * whoever takes it to zero unregisters and unmaps, so memory handed to libraries that free it later (Arrow
     * buffers) is never unmapped under them, even when the client is closed first.
     */
    private final AtomicInteger mappingHolds = new AtomicInteger(1);
    /**
     * How long this client's last get that waited waited for its seal (ns), or longer than any spin: sets the next
     * waiting get's spin (see {@link #MAX_SPIN_BEFORE_SLEEP_NANOS}). Racy by design: a hint, shared by threads.
     */
    private long lastSealWaitNanos = Long.MAX_VALUE;
    private volatile boolean closed;

    private final AutoCloseable owner;

    /**
     * Also called by {@code dev.depot.client.internal.StoreClients} through a private lookup, for the daemon and the
     * tools (clients over a store their own process opened): keep its parameters.
     */
    private DepotClient(Store store, AutoCloseable owner) {
        this.store = store;
        this.owner = owner;
    }

    /** Opens the store in the default directory ({@code $DEPOT_DIR}, else {@code /dev/shm/depot-$USER}). */
    public static DepotClient open() {
        return open(DepotDirectory.defaultDirectory());
    }

    /**
     * Opens the store in {@code dir}.
     *
     * @throws dev.depot.errors.StoreNotFoundException when there is no store: start one with {@code depot serve}
     */
    public static DepotClient open(Path dir) {
        return open(dir, ClientTableDescriptor.KIND_JAVA);
    }

    /** Opens the store registering as a client of {@code kind} (see {@link ClientTableDescriptor}). */
    public static DepotClient open(Path dir, int kind) {
        try {
            return new DepotClient(Store.open(dir, kind), null);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open the store at " + dir + ": " + e.getMessage(), e);
        }
    }

    public Path directory() {
        return store.directory();
    }

    /** Creates an object of {@code size} bytes with no metadata. */
    public ObjectWriter create(ObjectId id, long size) {
        return create(id, size, NO_METADATA);
    }

    /**
     * Creates an object: returns a writer over {@code size} writable bytes of shared memory. When the store is
     * full, least-recently-used unpinned objects are evicted first unless {@link CreateOption#NO_EVICT} is given.
     *
     * @throws dev.depot.errors.ObjectExistsException when the id exists already
     * @throws dev.depot.errors.StoreFullException when it does not fit
     */
    public ObjectWriter create(ObjectId id, long size, byte[] metadata, CreateOption... options) {
        return create(id, size, metadata, Duration.ZERO, options);
    }

    /**
     * As {@link #create(ObjectId, long, byte[], CreateOption...)}, but when the object does not fit (without
     * evicting, for {@link CreateOption#NO_EVICT}) waits up to {@code timeout} for deletes, releases, evictions
     * or spills to make room. The wait sleeps on a futex word that every free advances: no polling.
     *
     * @throws dev.depot.errors.StoreFullException when there is still no room after {@code timeout}
     */
    public ObjectWriter create(ObjectId id, long size, byte[] metadata, Duration timeout, CreateOption... options) {
        checkOpen();
        int flags = 0;
        for (CreateOption o : options) {
            flags |= switch (o) {
                case NO_EVICT -> Store.CREATE_NO_EVICT;
                case KEEP -> Store.CREATE_KEEP;
            };
        }
        long timeoutNanos = timeout.isNegative() ? -1 : timeout.toNanos();
        long record = store.create(id.w0(), id.w1(), id.w2(), size, metadata, flags, timeoutNanos, id.toHex());
        MemorySegment data = store.data(ClientTableDescriptor.pinnedSlot(record));
        ObjectWriter w = new ObjectWriter(this, id, record, data);
        openWriters.add(w);
        return w;
    }

    /** Creates, fills and seals an object with a copy of {@code bytes}. */
    public void put(ObjectId id, byte[] bytes) {
        put(id, MemorySegment.ofArray(bytes), NO_METADATA);
    }

    /** Creates, fills and seals an object with a copy of {@code data}. */
    public void put(ObjectId id, MemorySegment data, byte[] metadata) {
        try (ObjectWriter w = create(id, data.byteSize(), metadata)) {
            MemorySegment.copy(data, 0, w.data(), 0, data.byteSize());
            w.seal();
        }
    }

    /**
     * Gets a sealed object, waiting up to {@code timeoutMillis} for it to be sealed (0: do not wait; negative, or
     * too large to count in nanoseconds, as {@code Long.MAX_VALUE}: wait forever). Lock-free and socket-free when the object is there; waits on a futex otherwise.
     *
     * @throws ObjectMissingException when it is not sealed within the timeout
     */
    public ObjectView get(ObjectId id, long timeoutMillis) {
        ObjectView v = tryGet(id, timeoutMillis);
        if (v == null) {
            throw new ObjectMissingException("object " + id + (timeoutMillis == 0 ? " does not exist"
                : " was not sealed within " + timeoutMillis + " ms") + " in the store at " + directory());
        }
        return v;
    }

    /** As {@link #get(ObjectId, long)}. */
    public ObjectView get(ObjectId id, Duration timeout) {
        long millis;
        try {
            millis = timeout.toMillis();
        } catch (ArithmeticException tooLong) {
            millis = timeout.isNegative() ? -1 : Long.MAX_VALUE;  // both mean forever
        }
        return get(id, millis);
    }

    /**
     * As {@link #get(ObjectId, long)} but returns null when the object is missing after the timeout.
     *
     * <p>A spilled object is restored by the daemon: the get waits for it like for a seal, up to its timeout; with
     * timeout 0 (do not wait for a seal), up to {@link Store#SPILL_WAIT_NANOS} for the restore. When the daemon
     * reports that the restore failed, the get fails at once: {@link ObjectLostException} for a missing or damaged
     * spill file (the object is gone), and for a store with no room {@link StoreFullException} when the
     * timeout ends (at once with timeout 0), since room may come meanwhile.
     */
    public ObjectView tryGet(ObjectId id, long timeoutMillis) {
        checkOpen();
        Pin pin = store.tryPin(id.w0(), id.w1(), id.w2());
        if (pin != null) {
            return view(id, pin);
        }
        long spilled = restoreIfSpilled(id);
        boolean noWait = timeoutMillis == 0;
        if (spilled >= 0) {
            checkRestore(id, spilled, true, noWait);
            if (noWait) {
                timeoutMillis = Store.SPILL_WAIT_NANOS / 1_000_000L;
            }
        } else if (noWait) {
            return null;
        }
        // A seal that comes within microseconds is met by spinning: waking a sleeping process costs ~7 µs and much
        // more on a busy machine. Counted once, until the get ends (see Store.sealWaiter).
        try (FutexWaiter wait = store.sealWaiter(id.w0(), id.w1(), spinBeforeSleepNanos(),
                Timeouts.nanosOf(timeoutMillis))) {
            while (true) {
                // Read the futex word before looking: a seal after the look bumps it, so the wait below cannot miss it.
                int sequence = wait.sequence();
                pin = store.tryPin(id.w0(), id.w1(), id.w2());
                if (pin != null) {
                    return sealWaitEnded(id, pin, wait.startNanos());
                }
                long now = restoreIfSpilled(id);
                if (spilled >= 0 || now >= 0) {
                    // A restore that failed ends the wait (its record is written before the wake-up that brings us here).
                    spilled = checkRestore(id, now >= 0 ? now : spilled, now >= 0, noWait) ? (now >= 0 ? now : spilled) : -1;
                }
                FutexWaiter.Pause pause = wait.pause(sequence);
                if (pause == FutexWaiter.Pause.EXPIRED) {
                    if (spilled >= 0) {
                        checkRestore(id, spilled, true, true);
                    }
                    return null;
                }
                if (pause == FutexWaiter.Pause.SLEPT) {
                    // Look first: the seal that woke us is most likely this id's, and the futex word's cache line is
                    // now the sealer's. If not, the loop reads the word again before it looks and waits.
                    pin = store.tryPin(id.w0(), id.w1(), id.w2());
                    if (pin != null) {
                        return sealWaitEnded(id, pin, wait.startNanos());
                    }
                }
            }
        }
    }

    /**
     * Checks what the daemon reported about the restore of the spilled entry {@code entry} of {@code id}: throws
     * when it lost the object, or (when {@code noRoomEnds}) when it had no room for it. Returns false when the
     * entry is gone without a failure ({@code stillSpilled} false: deleted), true while the restore may still come.
     */
    private boolean checkRestore(ObjectId id, long entry, boolean stillSpilled, boolean noRoomEnds) {
        RestoreFailures.Failure f = store.restoreFailure(entry);
        if (f != null && (f.lost() || stillSpilled && noRoomEnds)) {
            String message = "object " + id + " could not be restored from the spill directory "
                + store.spillDirectory() + ": " + f.reason() + (f.lost() ? "; the object is lost (the daemon dropped"
                + " it): put it again" : "");
            throw f.lost() ? new ObjectLostException(message) : new StoreFullException(message);
        }
        return stillSpilled;
    }

    /** The view of an object a get waited for; remembers how long it waited (see {@link #spinBeforeSleepNanos}). */
    private ObjectView sealWaitEnded(ObjectId id, Pin pin, long start) {
        lastSealWaitNanos = System.nanoTime() - start;
        return view(id, pin);
    }

    /** Twice the last seal wait, within [{@link #SPIN_BEFORE_SLEEP_NANOS}, {@link #MAX_SPIN_BEFORE_SLEEP_NANOS}]. */
    private long spinBeforeSleepNanos() {
        long last = lastSealWaitNanos;
        return last > MAX_SPIN_BEFORE_SLEEP_NANOS / 2 ? SPIN_BEFORE_SLEEP_NANOS
            : Math.max(SPIN_BEFORE_SLEEP_NANOS, 2 * last);
    }

    /**
     * When {@code id} names a spilled object, asks the daemon to restore it (once, however many readers ask) and
     * returns its entry ({@link Store#spilledEntry}), whose failure record says why if the restore fails; the
     * restore is announced like a seal. -1 when no spilled object has this id.
     */
    private long restoreIfSpilled(ObjectId id) {
        long entry = store.spilledEntry(id.w0(), id.w1(), id.w2());
        if (entry < 0) {
            return -1;
        }
        int state = store.requestRestore(id.w0(), id.w1(), id.w2());
        if (state == Store.RESTORE_IMPOSSIBLE) {
            throw new DepotException("object " + id + " is spilled to " + store.spillDirectory() + " but no daemon"
                + " with that spill directory runs to restore it; start `depot serve --dir " + directory()
                + " --spill-dir DIR`");
        }
        if (state == Store.NOT_SPILLED) {
            checkRestore(id, entry, false, false);  // gone since the look above: dropped as lost, restored or deleted
            return -1;
        }
        return entry;
    }

    /**
     * Gets several objects, waiting up to {@code timeoutMillis} in total for all of them. The result has one
     * entry per id, in order; an object still missing at the end is a {@code null} entry.
     */
    public List<ObjectView> get(List<ObjectId> ids, long timeoutMillis) {
        long start = System.nanoTime();
        long timeoutNanos = Timeouts.nanosOf(timeoutMillis);
        List<ObjectView> out = new ArrayList<>(ids.size());
        try {
            for (ObjectId id : ids) {
                long left = timeoutMillis == 0 ? 0 : Timeouts.remainingMillis(timeoutNanos, start, System.nanoTime());
                out.add(tryGet(id, left));
            }
        } catch (RuntimeException e) {
            for (ObjectView v : out) {
                if (v != null) {
                    v.close();
                }
            }
            throw e;
        }
        return Collections.unmodifiableList(out);
    }

    private ObjectView view(ObjectId id, Pin pin) {
        MemorySegment data;
        try {
            data = store.dataReadOnly(pin.slot());
        } catch (RuntimeException corrupt) {
            store.unpin(pin);
            throw corrupt;
        }
        openViews.incrementAndGet();
        return new ObjectView(this, id, pin, data);
    }

    /** True when a sealed object with this id exists. */
    public boolean contains(ObjectId id) {
        checkOpen();
        Pin pin = store.tryPin(id.w0(), id.w1(), id.w2());
        if (pin == null) {
            return false;
        }
        store.unpin(pin);
        return true;
    }

    /**
     * Deletes a sealed object. Deferred while it is pinned: gets fail at once, the space is freed when the last
     * view closes.
     *
     * @return false when no sealed object has this id
     */
    public boolean delete(ObjectId id) {
        checkOpen();
        return store.delete(id.w0(), id.w1(), id.w2());
    }

    /**
     * Subscribes to every object event of the store from now on: sealed (with data and metadata sizes), deleted,
     * evicted, spilled, restored, by any process. See {@link Subscription}; closed with this client.
     *
     * @throws dev.depot.errors.ResourceLimitException when every subscriber slot of the store is taken
     */
    public Subscription subscribe() {
        checkOpen();
        Subscription s = new Subscription(this, store.subscribe());
        openSubscriptions.add(s);
        return s;
    }

    void subscriptionClosed(Subscription s) {
        openSubscriptions.remove(s);
    }

    /** Every object in the store (sealed, being created, or deleted but still pinned). */
    public List<ObjectInfo> list() {
        List<ObjectInfo> out = new ArrayList<>();
        forEachObject(out::add);
        return out;
    }

    /**
     * Hands every object in the store to {@code sink}, in the index's order, without holding a listing: for
     * stores with millions of objects, where {@link #list()} would hold hundreds of bytes for each.
     */
    public void forEachObject(java.util.function.Consumer<ObjectInfo> sink) {
        checkOpen();
        store.forEachEntry(e -> sink.accept(new ObjectInfo(ObjectId.fromBytes(e.id()), stateOf(e.state()),
            e.dataLength(), e.metadataLength(), e.pins(), Instant.ofEpochMilli(e.createTimeMillis()),
            Instant.ofEpochMilli(e.lastAccessMillis()))));
    }

    private static ObjectState stateOf(EntryState s) {
        return switch (s) {
            case CREATING -> ObjectState.CREATING;
            case SEALED, EVICTING, RESTORING -> ObjectState.SEALED;
            case SPILLED, RESTORE_WANTED -> ObjectState.SPILLED;
            case DELETE_PENDING -> ObjectState.DELETE_PENDING;
            default -> ObjectState.DELETING;
        };
    }

    /** Evicts least-recently-used unpinned objects until {@code bytes} are freed; returns the bytes freed. */
    public long evict(long bytes) {
        checkOpen();
        return store.evict(bytes);
    }

    public StoreStats stats() {
        checkOpen();
        return StoreStats.of(store.statistics());
    }

    void seal(long record) {
        store.seal(record);
    }

    void abort(long record) {
        if (!closed) {
            store.abort(record);
        }
    }

    /** The metadata of a pinned object (sliced on demand: most gets never ask for it). */
    MemorySegment metadataOf(Pin pin) {
        return store.metadata(pin.slot());
    }

    void writerClosed(ObjectWriter w) {
        openWriters.remove(w);
    }

    /** Called by {@link ObjectView#holdMapping}: the view is no longer counted as a leak at close. */
    void holdMapping() {
        while (true) {
            int holds = mappingHolds.get();
            if (holds == 0 || closed) {
                throw new IllegalStateException("this Depot client is closed");
            }
            if (mappingHolds.compareAndSet(holds, holds + 1)) {
                openViews.decrementAndGet();
                return;
            }
        }
    }

    /** Releases the pin of a view that held the mapping, then its hold: the store stays mapped until both. */
    void releaseHeld(Pin pin) {
        store.unpin(pin);
        dropMappingHold();
    }

    void release(ObjectView view, Pin pin) {
        if (!closed) {
            openViews.decrementAndGet();
            store.unpin(pin);
        }
    }

    static ByteBuffer byteBufferOf(MemorySegment data, ObjectId id) {
        if (data.byteSize() > Integer.MAX_VALUE) {
            throw new UnsupportedOperationException("object " + id + " has " + data.byteSize()
                + " bytes, more than a ByteBuffer can address; use data(), a MemorySegment");
        }
        return data.asByteBuffer();
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("this Depot client is closed");
        }
    }

    public boolean isClosed() {
        return closed;
    }

    /**
     * Closes the client: unsealed writers are aborted, pins released, the store unmapped. Views and writers
     * still open are a leak in the caller's code and are reported on stderr. Views that
     * {@linkplain ObjectView#holdMapping hold the mapping} are not: they keep their pins and the mapping, and the
     * last of them to close finishes closing the client.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        int views = openViews.get();
        int writers = openWriters.size();
        if (views > 0 || writers > 0) {
            System.err.println("depot: client closed with " + views + " open view(s) and " + writers
                + " unsealed writer(s); their pins were released and unsealed objects aborted");
        }
        closed = true;
        for (Subscription s : openSubscriptions) {
            s.close();
        }
        dropMappingHold();
    }

    private void dropMappingHold() {
        if (mappingHolds.decrementAndGet() != 0) {
            return;
        }
        try (store) {
            if (owner != null) {
                owner.close();
            }
        } catch (Exception e) {
            throw new DepotException("closing the store at " + directory() + " failed: " + e.getMessage(), e);
        }
    }
}
