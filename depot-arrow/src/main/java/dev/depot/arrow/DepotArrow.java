package dev.depot.arrow;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.errors.DepotException;
import dev.depot.errors.ErrorCode;
import java.lang.foreign.MemorySegment;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * Arrow record batches in Depot: {@link #put} writes {@code VectorSchemaRoot}s as one Arrow IPC stream into one
 * object (one copy, sized exactly beforehand); {@link #open} reads it back as {@code VectorSchemaRoot}s whose
 * buffers are the shared memory itself, pinned until the last of them is released. pyarrow reads and writes the
 * same objects ({@code depot.arrow} in Python). See {@code docs/ARROW.md}.
 *
 * <pre>{@code
 * DepotArrow.put(depot, id, root);
 * try (DepotArrowReader reader = DepotArrow.open(depot, id, allocator)) {
 *     while (reader.hasNext()) {
 *         try (VectorSchemaRoot batch = reader.next()) {
 *             // batch's buffers lie in shared memory; nothing was copied
 *         }
 *     }
 * }
 * }</pre>
 */
public final class DepotArrow {
    private DepotArrow() {
    }

    /**
     * Writes {@code batches} (all of one schema, at least one) as an uncompressed Arrow IPC stream into a new
     * sealed object {@code id}. Returns the object's size.
     *
     * @throws UnsupportedStreamException for dictionary-encoded fields
     * @throws dev.depot.errors.ObjectExistsException when {@code id} exists already
     * @throws dev.depot.errors.StoreFullException when the stream does not fit
     */
    public static long put(DepotClient client, ObjectId id, VectorSchemaRoot... batches) {
        return StreamWriter.write(client, id, batches);
    }

    /** As {@link #open(DepotClient, ObjectId, BufferAllocator, long)} without waiting for the object. */
    public static DepotArrowReader open(DepotClient client, ObjectId id, BufferAllocator allocator) {
        return open(client, id, allocator, 0);
    }

    /**
     * Opens the Arrow stream in object {@code id}, waiting up to {@code timeoutMillis} for it to be sealed (as
     * {@link DepotClient#get(ObjectId, long)}). The whole object is charged to {@code allocator} until every
     * buffer of every batch is released; it stays pinned (and mapped, even if {@code client} is closed) as long.
     *
     * @throws BadStreamException when the object is not a complete Arrow IPC stream
     * @throws UnsupportedStreamException for compressed or dictionary-encoded streams
     * @throws dev.depot.errors.ObjectMissingException when it does not exist within the timeout
     */
    public static DepotArrowReader open(DepotClient client, ObjectId id, BufferAllocator allocator,
                                        long timeoutMillis) {
        return DepotArrowReader.open(client, id, allocator, timeoutMillis);
    }

    /**
     * Reads the Arrow stream in {@code stream}, memory the caller keeps valid (a slice of a pinned object, say), as
     * {@link #open} reads an object: batches over that memory, no copy. {@code release} runs once, when the reader
     * and every batch it returned are closed; {@code what} names the stream in messages. When this throws, release
     * does not run (the caller still holds the memory).
     *
     * @throws BadStreamException when {@code stream} is not a complete Arrow IPC stream
     */
    public static DepotArrowReader read(MemorySegment stream, String what, BufferAllocator allocator,
                                        Runnable release) {
        return DepotArrowReader.over(stream, what, allocator, release);
    }

    /** An object that is not a well-formed, complete Arrow IPC stream (or not the one it claims to be). */
    public static class BadStreamException extends DepotException {
        private static final long serialVersionUID = 1L;

        public BadStreamException(String message) {
            super(message);
        }

        public BadStreamException(String message, Throwable cause) {
            super(message, cause);
        }

        @Override
        public ErrorCode code() {
            return ErrorCode.BAD_REQUEST;
        }
    }

    /** A valid Arrow stream using a feature Depot does not read zero-copy (compression, dictionaries). */
    public static final class UnsupportedStreamException extends BadStreamException {
        private static final long serialVersionUID = 1L;

        public UnsupportedStreamException(String message) {
            super(message);
        }
    }
}
