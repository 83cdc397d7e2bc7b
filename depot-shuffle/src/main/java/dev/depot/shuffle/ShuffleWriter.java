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
    /** The slice lengths; null until commit for a writer opened with only the map's total size. */
    private long[] lengths;
    /** The map's whole object (PER_MAP layout), or null. */
    private MemorySegment data;
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
                data = total == 0 ? MemorySegment.NULL : create(ids.mapData(map), total);
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

    /**
     * A writer of the PER_MAP layout that knows only the map's total size: the slices' lengths are given at
     * {@link #commit(long[])}. Lets a map create (and touch) its object before it knows how its output splits.
     */
    ShuffleWriter(Shuffle shuffle, int map, long totalBytes) {
        if (shuffle.layout() != Shuffle.Layout.PER_MAP) {
            throw new IllegalStateException("a writer with only a total size needs the PER_MAP layout; shuffle "
                + shuffle.id() + " is " + shuffle.layout());
        }
        if (totalBytes < 0) {
            throw new IllegalArgumentException("map " + map + " has a negative size " + totalBytes);
        }
        shuffle.metadataFor(totalBytes);
        this.shuffle = shuffle;
        this.map = map;
        this.slices = new MemorySegment[shuffle.partitions()];
        MapStatus.putOwner(shuffle.client(), shuffle.ids(), map);
        try {
            data = totalBytes == 0 ? MemorySegment.NULL : create(shuffle.ids().mapData(map), totalBytes);
        } catch (RuntimeException e) {
            fail("could not create its object: " + e.getMessage());
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
        checkLengthsKnown();
        return slices[partition];
    }

    /** The byte length of {@code partition}'s slice. */
    public long length(int partition) {
        checkLengthsKnown();
        return lengths[partition];
    }

    /**
     * The map's whole object, all slices in partition order (PER_MAP layout). For a writer opened with only a
     * total size ({@link Shuffle#writer(int, long)}), this is where the map writes before it knows the split.
     */
    public MemorySegment data() {
        checkOpen();
        if (data == null) {
            throw new IllegalStateException("shuffle " + shuffle.id() + " has the PER_SLICE layout: one object per"
                + " slice, use partition(p)");
        }
        return data;
    }

    /**
     * Commits a writer opened with only a total size: {@code sliceBytes[p]} of {@link #data()}, in partition
     * order, are partition {@code p}'s; they add up to the total.
     */
    public void commit(long[] sliceBytes) {
        checkOpen();
        if (lengths != null) {
            throw new IllegalStateException("the slice lengths of map " + map + " were given when its writer opened;"
                + " use commit()");
        }
        long sum = 0;
        for (long b : sliceBytes) {
            if (b < 0) {
                throw new IllegalArgumentException("map " + map + " has a slice of negative length " + b);
            }
            shuffle.metadataFor(b);
            sum += b;
        }
        if (sliceBytes.length != shuffle.partitions() || sum != data.byteSize()) {
            throw new IllegalArgumentException("map " + map + " gives " + sliceBytes.length + " slice lengths adding"
                + " up to " + sum + " bytes; shuffle " + shuffle.id() + " has " + shuffle.partitions()
                + " partitions and the map's object " + data.byteSize() + " bytes");
        }
        lengths = sliceBytes.clone();
        commit();
    }

    private void checkLengthsKnown() {
        if (lengths == null) {
            throw new IllegalStateException("the slice lengths of map " + map + " are given at commit: write into"
                + " data()");
        }
    }

    /** Seals every slice, then the status record: readers of every partition may go on. */
    public void commit() {
        checkOpen();
        checkLengthsKnown();
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
            MapStatus.put(shuffle.client(), shuffle.ids(), map, false,
                lengths != null ? lengths : new long[shuffle.partitions()], reason);
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
