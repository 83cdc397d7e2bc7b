package dev.depot.client;

import dev.depot.core.store.Pin;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;

/**
 * A sealed object, read in place: {@link #data()} is a read-only view of shared memory, not a copy. The object
 * stays pinned (it cannot be deleted or evicted) until the view is closed. Segments taken from a view must not
 * be used after it is closed: the memory may then hold another object. Closing twice is harmless.
 */
public final class ObjectView implements AutoCloseable {
    private final DepotClient client;
    private final ObjectId id;
    private final Pin pin;
    private final MemorySegment data;
    private boolean closed;
    private boolean holdsMapping;

    ObjectView(DepotClient client, ObjectId id, Pin pin, MemorySegment data) {
        this.client = client;
        this.id = id;
        this.pin = pin;
        this.data = data;
    }

    public ObjectId id() {
        return id;
    }

    /** The object's data: read-only, zero-copy. */
    public MemorySegment data() {
        checkOpen();
        return data;
    }

    /** A read-only {@link ByteBuffer} over the data, for older APIs (objects under 2 GiB). */
    public ByteBuffer asByteBuffer() {
        return DepotClient.byteBufferOf(data(), id);
    }

    public long size() {
        return data.byteSize();
    }

    /** A copy of the object's metadata. */
    public byte[] metadata() {
        checkOpen();
        return client.metadataOf(pin).toArray(ValueLayout.JAVA_BYTE);
    }

    /**
     * Makes this view outlive its client: closing the client no longer releases this view's pin nor unmaps the
     * store; both happen when this view is closed (the client's close is then finished by the last such view).
     * For memory handed to a library that frees it later, from any thread (Arrow buffers): closing the view is
     * then that library's job. Harmless when called twice.
     *
     * @return this view
     * @throws IllegalStateException when the view or its client is closed
     */
    public ObjectView holdMapping() {
        checkOpen();
        if (!holdsMapping) {
            client.holdMapping();
            holdsMapping = true;
        }
        return this;
    }

    /** Releases the pin (and, for a view that {@linkplain #holdMapping holds the mapping}, its hold). */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (holdsMapping) {
            client.releaseHeld(pin);
        } else {
            client.release(this, pin);
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("view of object " + id + " is closed");
        }
    }
}
