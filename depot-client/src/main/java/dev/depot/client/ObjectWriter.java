package dev.depot.client;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/**
 * An object being created: write its data through {@link #data()}, then {@link #seal()} it. Closing a writer
 * that was not sealed aborts the object and frees its space. Use from one thread; not reusable.
 */
public final class ObjectWriter implements AutoCloseable {
    private enum State { OPEN, SEALED, ABORTED }

    private final DepotClient client;
    private final ObjectId id;
    private final long record;
    private final MemorySegment data;
    private State state = State.OPEN;

    ObjectWriter(DepotClient client, ObjectId id, long record, MemorySegment data) {
        this.client = client;
        this.id = id;
        this.record = record;
        this.data = data;
    }

    public ObjectId id() {
        return id;
    }

    /** The object's data in shared memory, writable, zero-copy. Do not use it after {@link #seal()}. */
    public MemorySegment data() {
        checkOpen();
        return data;
    }

    /** A {@link ByteBuffer} over the data, for older APIs; objects of 2 GiB and more need {@link #data()}. */
    public ByteBuffer asByteBuffer() {
        return DepotClient.byteBufferOf(data(), id);
    }

    public long size() {
        return data.byteSize();
    }

    /** Makes the object immutable and visible to every process; wakes processes waiting for it. */
    public void seal() {
        checkOpen();
        client.seal(record);
        state = State.SEALED;
        client.writerClosed(this);
    }

    /** Discards the object and frees its space. Harmless after seal or abort. */
    public void abort() {
        if (state != State.OPEN) {
            return;
        }
        state = State.ABORTED;
        try {
            client.abort(record);
        } finally {
            client.writerClosed(this);
        }
    }

    public boolean isSealed() {
        return state == State.SEALED;
    }

    /** Aborts the object unless it was sealed. */
    @Override
    public void close() {
        abort();
    }

    private void checkOpen() {
        if (state != State.OPEN) {
            throw new IllegalStateException("writer of object " + id + " is " + state.name().toLowerCase()
                + "; its data can no longer be written");
        }
    }
}
