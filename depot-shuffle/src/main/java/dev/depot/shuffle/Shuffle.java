package dev.depot.shuffle;

import dev.depot.client.ArrayMetadata;
import dev.depot.client.DepotClient;
import dev.depot.client.DepotClient.CreateOption;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectView;
import dev.depot.core.sys.ProcessIdentity;
import dev.depot.errors.DepotException;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A shuffle through a Depot store: {@code maps} map tasks each write one slice for each of {@code partitions}
 * reduce tasks; reduce task {@code p} reads slice {@code p} of every map, in place (zero-copy). Map and reduce
 * tasks may run in any processes on the machine, in Java or Python ({@code depot.shuffle}).
 *
 * <pre>{@code
 * try (Shuffle s = Shuffle.create(client, "sort-42", maps, partitions)) {     // the coordinator
 *     // in each map task (any process: Shuffle.open(client, "sort-42", timeout)):
 *     try (ShuffleWriter w = s.writer(map, sizes)) {          // sizes[p]: bytes of the slice for partition p
 *         w.partition(p).copyFrom(...);                        // write straight into shared memory
 *         w.commit();
 *     }
 *     // in each reduce task:
 *     try (ShuffleReader r = s.reader(partition, 60_000)) {   // waits for the maps still running
 *         for (MemorySegment slice : r.slices()) { ... }       // read-only views, no copy
 *     }
 * }                                                            // close: every object of the shuffle is deleted
 * }</pre>
 *
 * <p>Failures: a map that fails ({@link ShuffleWriter#fail}, or a writer closed without commit) or whose process
 * dies makes readers throw {@link MapFailedException} naming the map, within {@value MapStatus#LIVENESS_CHECK_MILLIS}
 * ms; a map that does not commit in time is a {@link MapTimeoutException}. A reader that dies loses its pins to
 * the daemon's reaper. The creator's {@link #close()} deletes every object the shuffle made, whatever happened.
 *
 * <p>Lifecycle: {@link #create} returns the owning handle (its close deletes the shuffle); {@link #open} returns a
 * handle in another process (its close only closes the writers and readers it opened). Thread-safe; each writer
 * and reader is for one thread.
 */
public final class Shuffle implements AutoCloseable {
    /** How a map's slices are laid out in the store; see {@code docs/DESIGN.md} ("Shuffles") for the measurements. */
    public enum Layout {
        /** One object per map and partition: each slice is an object of its own (P creates per map). */
        PER_SLICE,
        /**
         * One object per map holding all of its slices in partition order, indexed by the status record: one
         * create per map. The default: as fast as PER_SLICE for few partitions, much faster and with far fewer
         * objects for many (docs/DESIGN.md, "Layout: one object per map").
         */
        PER_MAP
    }

    /**
     * Options of {@link #create(DepotClient, String, int, int, Options)}.
     *
     * @param layout how slices are stored
     * @param dtype  empty for plain bytes, or a NumPy type string ({@code "<f8"}, {@code "<i8"}): every slice is
     *               then an array of it, readable from Python as a NumPy array
     */
    public record Options(Layout layout, String dtype) {
        public static Options defaults() {
            return new Options(Layout.PER_MAP, "");
        }

        public Options withLayout(Layout l) {
            return new Options(l, dtype);
        }

        public Options withDtype(String d) {
            return new Options(layout, d);
        }
    }

    /** A map failed or its process died: the shuffle cannot complete. */
    public static final class MapFailedException extends DepotException {
        private static final long serialVersionUID = 1L;
        private final int map;

        MapFailedException(String shuffleId, int map, String what) {
            super("map " + map + " of shuffle " + shuffleId + " " + what);
            this.map = map;
        }

        public int map() {
            return map;
        }
    }

    /** A map did not commit within a reader's timeout. */
    public static final class MapTimeoutException extends DepotException {
        private static final long serialVersionUID = 1L;
        private final int map;

        MapTimeoutException(String shuffleId, int map, String what) {
            super("map " + map + " of shuffle " + shuffleId + " did not commit in time: it " + what);
            this.map = map;
        }

        public int map() {
            return map;
        }
    }

    /**
     * The create options of every object a shuffle makes, the one place that decides how shuffle data is kept:
     * {@code KEEP}, never evicted (a daemon with a spill directory spills it under pressure, a get restores it).
     */
    static final CreateOption[] CREATE_OPTIONS = {CreateOption.KEEP};

    private enum State { OPEN, CLOSED }

    private final DepotClient client;
    private final String shuffleId;
    private final ShuffleIds ids;
    private final int maps;
    private final int partitions;
    private final Layout layout;
    private final String dtype;
    private final boolean owning;
    private final Set<AutoCloseable> open = ConcurrentHashMap.newKeySet();
    private volatile State state = State.OPEN;

    private Shuffle(DepotClient client, String shuffleId, int maps, int partitions, Layout layout, String dtype,
                    boolean owning) {
        this.client = client;
        this.shuffleId = shuffleId;
        this.ids = new ShuffleIds(shuffleId);
        this.maps = maps;
        this.partitions = partitions;
        this.layout = layout;
        this.dtype = dtype;
        this.owning = owning;
    }

    /** As {@link #create(DepotClient, String, int, int, Options)} with {@link Options#defaults()}. */
    public static Shuffle create(DepotClient client, String shuffleId, int maps, int partitions) {
        return create(client, shuffleId, maps, partitions, Options.defaults());
    }

    /**
     * Creates a shuffle: seals its manifest so that other processes can {@link #open} it. The returned handle
     * owns the shuffle: closing it deletes every object of the shuffle. First deletes the shuffles whose creator
     * died ({@link #sweepAbandoned}).
     *
     * @throws dev.depot.errors.ObjectExistsException when a shuffle with this id exists in the store
     */
    public static Shuffle create(DepotClient client, String shuffleId, int maps, int partitions, Options options) {
        if (maps <= 0 || partitions <= 0) {
            throw new IllegalArgumentException("a shuffle needs at least one map and one partition, got " + maps
                + " maps and " + partitions + " partitions");
        }
        String dtype = options.dtype();
        if (!dtype.isEmpty()) {
            ArrayMetadata.of(dtype, 0);  // validates the type string
        }
        if (dtype.length() > ManifestDescriptor.MAX_DTYPE_LENGTH) {
            throw new IllegalArgumentException("dtype '" + dtype + "' is longer than " + ManifestDescriptor.MAX_DTYPE_LENGTH);
        }
        Shuffle s = new Shuffle(client, shuffleId, maps, partitions, options.layout(), dtype, true);
        AbandonedShuffles.sweep(client);
        MemorySegment m = new Manifest(options.layout(), dtype, maps, partitions, ProcessIdentity.self()).encode();
        putRecord(client, s.ids.manifest(), m, Manifest.metadataFor(shuffleId));
        return s;
    }

    /**
     * Deletes the shuffles whose creator died without closing them (their objects are never evicted, so nothing
     * else would), unless a map of theirs is still being written by a live process. {@link #create} does it
     * first, so a store where shuffles are run does not keep a dead coordinator's data for long.
     *
     * @return the shuffles deleted
     */
    public static List<AbandonedShuffle> sweepAbandoned(DepotClient client) {
        return AbandonedShuffles.sweep(client);
    }

    /** The shuffles {@link #sweepAbandoned} would delete now; deletes nothing. */
    public static List<AbandonedShuffle> findAbandoned(DepotClient client) {
        return AbandonedShuffles.find(client);
    }

    /** Creates, fills and seals one of the shuffle's small records with {@link #CREATE_OPTIONS}. */
    static void putRecord(DepotClient client, ObjectId id, MemorySegment record) {
        putRecord(client, id, record, new byte[0]);
    }

    /** As {@link #putRecord(DepotClient, ObjectId, MemorySegment)}, with metadata. */
    static void putRecord(DepotClient client, ObjectId id, MemorySegment record, byte[] metadata) {
        try (var w = client.create(id, record.byteSize(), metadata, CREATE_OPTIONS)) {
            MemorySegment.copy(record, 0, w.data(), 0, record.byteSize());
            w.seal();
        }
    }

    /**
     * Opens a shuffle another process created, waiting up to {@code timeoutMillis} for its manifest. Closing the
     * handle closes its writers and readers; the objects stay until the creator closes the shuffle.
     *
     * @throws dev.depot.errors.ObjectMissingException when there is no such shuffle within the timeout
     */
    public static Shuffle open(DepotClient client, String shuffleId, long timeoutMillis) {
        ShuffleIds ids = new ShuffleIds(shuffleId);
        try (ObjectView v = client.get(ids.manifest(), timeoutMillis)) {
            Manifest m = Manifest.decode(v.data(), shuffleId, ids.manifest());
            return new Shuffle(client, shuffleId, m.maps(), m.partitions(), m.layout(), m.dtype(), false);
        }
    }

    /**
     * Opens map {@code map}'s writer with the byte length of each of its slices ({@code partitionBytes[p]} for
     * partition {@code p}; zero for an empty slice). With a dtype, each length is a multiple of its item size.
     *
     * @throws IllegalStateException when the map already has a writer (a map is written once)
     * @throws dev.depot.errors.StoreFullException when the slices do not fit
     */
    public ShuffleWriter writer(int map, long[] partitionBytes) {
        checkOpen();
        checkMap(map);
        if (partitionBytes.length != partitions) {
            throw new IllegalArgumentException("shuffle " + shuffleId + " has " + partitions + " partitions but "
                + partitionBytes.length + " slice lengths were given");
        }
        ShuffleWriter w = new ShuffleWriter(this, map, partitionBytes.clone());
        open.add(w);
        return w;
    }

    /**
     * Opens map {@code map}'s writer knowing only its total size (PER_MAP layout): the map writes its slices one
     * after the other into {@link ShuffleWriter#data()} and gives their lengths to
     * {@link ShuffleWriter#commit(long[])}. A sample sort creates its object, and touches its pages, before the
     * splitters are known.
     */
    public ShuffleWriter writer(int map, long totalBytes) {
        checkOpen();
        checkMap(map);
        ShuffleWriter w = new ShuffleWriter(this, map, totalBytes);
        open.add(w);
        return w;
    }

    /** Writes map {@code map}'s slices, one segment per partition, copying each once; then commits. */
    public void writeMap(int map, List<MemorySegment> slices) {
        long[] sizes = new long[slices.size()];
        for (int p = 0; p < sizes.length; p++) {
            sizes[p] = slices.get(p).byteSize();
        }
        try (ShuffleWriter w = writer(map, sizes)) {
            for (int p = 0; p < sizes.length; p++) {
                MemorySegment.copy(slices.get(p), 0, w.partition(p), 0, sizes[p]);
            }
            w.commit();
        }
    }

    /**
     * Opens the reader of {@code partition}: waits up to {@code timeoutMillis} in all (negative: forever) for
     * every map to commit, then pins every map's slice for it.
     *
     * @throws MapFailedException when a map failed or died (the error names it)
     * @throws MapTimeoutException when a map has not committed within the timeout
     */
    public ShuffleReader reader(int partition, long timeoutMillis) {
        checkOpen();
        checkPartition(partition);
        long deadline = timeoutMillis < 0 ? Long.MAX_VALUE : System.nanoTime() + timeoutMillis * 1_000_000L;
        ShuffleReader r = new ShuffleReader(this, partition, deadline);
        open.add(r);
        return r;
    }

    public String id() {
        return shuffleId;
    }

    public int maps() {
        return maps;
    }

    public int partitions() {
        return partitions;
    }

    public Layout layout() {
        return layout;
    }

    /** Empty for plain bytes, else the NumPy type string of the slices' elements. */
    public String dtype() {
        return dtype;
    }

    /** True for the handle {@link #create} returned (whose close deletes the shuffle). */
    public boolean isOwner() {
        return owning;
    }

    DepotClient client() {
        return client;
    }

    ShuffleIds ids() {
        return ids;
    }

    void closed(AutoCloseable writerOrReader) {
        open.remove(writerOrReader);
    }

    /** Metadata of a slice or map object of {@code bytes} bytes: an array header when the shuffle has a dtype. */
    byte[] metadataFor(long bytes) {
        if (dtype.isEmpty()) {
            return new byte[0];
        }
        ArrayMetadata a = ArrayMetadata.of(dtype, 0);
        if (bytes % a.itemSize() != 0) {
            throw new IllegalArgumentException("a slice of " + bytes + " bytes is not a whole number of " + dtype
                + " elements (" + a.itemSize() + " bytes each)");
        }
        return ArrayMetadata.of(dtype, bytes / a.itemSize()).encode();
    }

    /**
     * Closes the writers and readers this handle opened (unfinished writers fail their map). The owning handle
     * then deletes every object of the shuffle, including those of failed and dead maps; deletion of objects that
     * readers elsewhere still pin completes when they let go. Call it once the tasks are done or dead; a writer
     * still running elsewhere would leave what it seals later. Closing twice is harmless.
     */
    @Override
    public void close() {
        if (state == State.CLOSED) {
            return;
        }
        state = State.CLOSED;
        RuntimeException failure = null;
        for (AutoCloseable c : List.copyOf(open)) {
            try {
                c.close();
            } catch (Exception e) {
                failure = addTo(failure, e);
            }
        }
        if (owning && !client.isClosed()) {
            failure = deleteAll(client, ids.all(maps, partitions), failure);
        }
        if (failure != null) {
            throw failure;
        }
    }

    /** Deletes {@code all}, adding each failure to {@code failure}; returns it. */
    private static RuntimeException deleteAll(DepotClient client, List<ObjectId> all, RuntimeException failure) {
        for (ObjectId id : all) {
            try {
                client.delete(id);
            } catch (RuntimeException e) {
                failure = addTo(failure, e);
            }
        }
        return failure;
    }

    private static RuntimeException addTo(RuntimeException first, Exception e) {
        if (first == null) {
            return e instanceof RuntimeException r ? r : new DepotException("closing a shuffle failed: " + e, e);
        }
        first.addSuppressed(e);
        return first;
    }

    void checkOpen() {
        if (state != State.OPEN) {
            throw new IllegalStateException("shuffle " + shuffleId + " is closed");
        }
    }

    private void checkMap(int map) {
        if (map < 0 || map >= maps) {
            throw new IndexOutOfBoundsException("map " + map + " is not in 0.." + (maps - 1) + " of shuffle " + shuffleId);
        }
    }

    private void checkPartition(int partition) {
        if (partition < 0 || partition >= partitions) {
            throw new IndexOutOfBoundsException("partition " + partition + " is not in 0.." + (partitions - 1)
                + " of shuffle " + shuffleId);
        }
    }

    @Override
    public String toString() {
        return "shuffle " + shuffleId + " (" + maps + " maps x " + partitions + " partitions, " + layout
            + (dtype.isEmpty() ? "" : ", " + dtype) + ")";
    }
}
