package dev.depot.shuffle;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectWriter;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * The writer of one map's output: one writable segment of shared memory per partition, sized when the writer
 * opened ({@link Shuffle#writer}). Fill them, then {@link #commit()}: the slices are sealed, then the map's
 * status record, which readers wait for. {@link #fail} (or closing without commit) aborts the slices and
 * records the failure, so readers fail at once with the reason instead of waiting.
 *
 * <p>If the process dies instead, the daemon aborts its unsealed slices and readers see the dead owner
 * ({@link MapStatusDescriptor}). For one thread; not reusable.
 */
public final class ShuffleWriter implements AutoCloseable {
    private enum State { OPEN, COMMITTED, FAILED }

    private final Shuffle shuffle;
    private final int map;
    private final long[] lengths;
    /** The objects being written: one per non-empty slice (PER_SLICE) or one for the map (PER_MAP). */
    private final List<ObjectWriter> objects = new ArrayList<>();
    private final MemorySegment[] slices;
    private State state = State.OPEN;

    ShuffleWriter(Shuffle shuffle, int map, long[] lengths) {
        this.shuffle = shuffle;
        this.map = map;
        this.lengths = lengths;
        this.slices = new MemorySegment[lengths.length];
        long total = 0;
        for (int p = 0; p < lengths.length; p++) {
            if (lengths[p] < 0) {
                throw new IllegalArgumentException("slice " + p + " of map " + map + " has a negative length " + lengths[p]);
            }
            shuffle.metadataFor(lengths[p]);  // checks whole elements before anything is created
            total = Math.addExact(total, lengths[p]);
        }
        DepotClient client = shuffle.client();
        ShuffleIds ids = shuffle.ids();
        MapStatus.putOwner(client, ids, map);
        try {
            if (shuffle.layout() == Shuffle.Layout.PER_MAP) {
                MemorySegment data = total == 0 ? MemorySegment.NULL : create(ids.mapData(map), total);
                long offset = 0;
                for (int p = 0; p < lengths.length; p++) {
                    slices[p] = total == 0 ? MemorySegment.NULL : data.asSlice(offset, lengths[p]);
                    offset += lengths[p];
                }
            } else {
                for (int p = 0; p < lengths.length; p++) {
                    slices[p] = lengths[p] == 0 ? MemorySegment.NULL : create(ids.slice(map, p), lengths[p]);
                }
            }
        } catch (RuntimeException e) {
            fail("could not create its slices: " + e.getMessage());
            throw e;
        }
    }

    private MemorySegment create(ObjectId id, long bytes) {
        ObjectWriter w = shuffle.client().create(id, bytes, shuffle.metadataFor(bytes), Shuffle.CREATE_OPTIONS);
        objects.add(w);
        return w.data();
    }

    public int map() {
        return map;
    }

    /** The writable slice for {@code partition} in shared memory (empty for an empty slice). */
    public MemorySegment partition(int partition) {
        checkOpen();
        return slices[partition];
    }

    /** The byte length of {@code partition}'s slice. */
    public long length(int partition) {
        return lengths[partition];
    }

    /** Seals every slice, then the status record: readers of every partition may go on. */
    public void commit() {
        checkOpen();
        try {
            for (ObjectWriter w : objects) {
                w.seal();
            }
            // The status is sealed after the slices: a reader that sees it committed finds every slice sealed.
            MapStatus.put(shuffle.client(), shuffle.ids(), map, true, lengths, "");
        } catch (RuntimeException e) {
            fail("could not commit: " + e.getMessage());
            throw e;
        }
        state = State.COMMITTED;
        shuffle.closed(this);
    }

    /**
     * Gives up this map: aborts its slices and records {@code reason}, so that every reader fails with it.
     * Harmless after commit or an earlier fail.
     */
    public void fail(String reason) {
        if (state != State.OPEN) {
            return;
        }
        state = State.FAILED;
        try {
            for (ObjectWriter w : objects) {
                if (w.isSealed()) {
                    shuffle.client().delete(w.id());
                } else {
                    w.abort();
                }
            }
            MapStatus.put(shuffle.client(), shuffle.ids(), map, false, lengths, reason);
        } finally {
            shuffle.closed(this);
        }
    }

    /** Fails the map ({@link #fail}) unless it was committed. */
    @Override
    public void close() {
        fail("its writer was closed without commit");
    }

    private void checkOpen() {
        if (state != State.OPEN) {
            throw new IllegalStateException("the writer of map " + map + " is " + state.name().toLowerCase());
        }
    }
}
