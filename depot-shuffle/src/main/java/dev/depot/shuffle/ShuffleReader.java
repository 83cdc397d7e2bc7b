package dev.depot.shuffle;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectView;
import dev.depot.errors.DepotException;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The reader of one partition: read-only, zero-copy segments of every map's slice for it, in map order, pinned
 * until {@link #close()}. Opening it ({@link Shuffle#reader}) waits for the maps still running. For one thread;
 * the segments must not be used after close.
 */
public final class ShuffleReader implements AutoCloseable {
    private final Shuffle shuffle;
    private final int partition;
    private final List<ObjectView> views = new ArrayList<>();
    private final List<MemorySegment> slices;
    private final long byteSize;
    private boolean closed;

    ShuffleReader(Shuffle shuffle, int partition, long deadlineNanos) {
        this.shuffle = shuffle;
        this.partition = partition;
        DepotClient client = shuffle.client();
        ShuffleIds ids = shuffle.ids();
        List<MemorySegment> out = new ArrayList<>(shuffle.maps());
        long total = 0;
        try {
            for (int m = 0; m < shuffle.maps(); m++) {
                MapStatus s = MapStatus.awaitCommitted(client, ids, shuffle.id(), m, shuffle.partitions(), deadlineNanos);
                long length = s.lengths[partition];
                if (length == 0) {
                    out.add(MemorySegment.NULL);
                    continue;
                }
                boolean perMap = shuffle.layout() == Shuffle.Layout.PER_MAP;
                ObjectView v = pin(client, perMap ? ids.mapData(m) : ids.slice(m, partition), m);
                views.add(v);
                out.add(perMap ? v.data().asSlice(s.offsetOf(partition), length) : v.data());
                total += length;
            }
        } catch (RuntimeException e) {
            release();
            throw e;
        }
        this.slices = Collections.unmodifiableList(out);
        this.byteSize = total;
    }

    private ObjectView pin(DepotClient client, ObjectId id, int map) {
        ObjectView v = client.tryGet(id, 0);
        if (v == null) {
            throw new DepotException("map " + map + " of shuffle " + shuffle.id() + " committed, but its slice for"
                + " partition " + partition + " (object " + id + ") is gone: was the shuffle closed?");
        }
        return v;
    }

    public int partition() {
        return partition;
    }

    /** One read-only segment per map, in map order; a map with nothing for this partition gives an empty one. */
    public List<MemorySegment> slices() {
        checkOpen();
        return slices;
    }

    /** The slice map {@code map} wrote for this partition. */
    public MemorySegment slice(int map) {
        return slices().get(map);
    }

    /** Total bytes of this partition over all maps. */
    public long byteSize() {
        return byteSize;
    }

    private void release() {
        for (ObjectView v : views) {
            v.close();
        }
        views.clear();
    }

    /** Releases the pins. Closing twice is harmless. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        release();
        shuffle.closed(this);
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("the reader of partition " + partition + " of shuffle " + shuffle.id()
                + " is closed");
        }
    }
}
