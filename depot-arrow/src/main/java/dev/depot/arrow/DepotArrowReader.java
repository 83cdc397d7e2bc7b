package dev.depot.arrow;

import dev.depot.arrow.DepotArrow.BadStreamException;
import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectView;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.util.Iterator;
import java.util.NoSuchElementException;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.ForeignAllocation;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.arrow.vector.util.ValueVectorUtility;

/**
 * The Arrow stream of one Depot object, read in place. Each batch is a new {@link VectorSchemaRoot} owned by the
 * caller, whose buffers are slices of the object's shared memory (nothing is copied; a validity bitmap that the
 * writer left out because a column has no nulls is the one thing Arrow Java allocates). The object stays pinned
 * until this reader and every batch it returned are closed, in any order and from any thread; the allocator is
 * charged the object's size for as long. Batches are read-only: writing into their vectors would change the
 * object for every process.
 */
public final class DepotArrowReader implements AutoCloseable, Iterator<VectorSchemaRoot> {
    private enum State { OPEN, CLOSED }

    private final ObjectId id;
    /** What messages call the stream: "object ID", or what the caller named a segment. */
    private final String what;
    private final BufferAllocator allocator;
    private final StreamIndex index;
    private final ArrowBuf whole;
    private final MemorySegment data;
    private int next;
    private State state = State.OPEN;

    private DepotArrowReader(ObjectId id, String what, BufferAllocator allocator, StreamIndex index, ArrowBuf whole,
                             MemorySegment data) {
        this.id = id;
        this.data = data;
        this.what = what;
        this.allocator = allocator;
        this.index = index;
        this.whole = whole;
    }

    static DepotArrowReader open(DepotClient client, ObjectId id, BufferAllocator allocator, long timeoutMillis) {
        ObjectView view = client.get(id, timeoutMillis);
        ArrowBuf whole;
        StreamIndex index;
        try {
            index = StreamIndex.of(view.data(), id);
            checkVectorsCanBeMade(index.schema(), allocator, "object " + id);
            view.holdMapping();
            whole = allocator.wrapForeignAllocation(new PinnedAllocation(view));
        } catch (RuntimeException e) {
            view.close();
            throw e;
        }
        return new DepotArrowReader(id, "object " + id, allocator, index, whole, view.data());
    }

    static DepotArrowReader over(MemorySegment stream, String what, BufferAllocator allocator, Runnable release) {
        StreamIndex index = StreamIndex.of(stream, what);
        checkVectorsCanBeMade(index.schema(), allocator, what);
        ArrowBuf whole = allocator.wrapForeignAllocation(new ForeignAllocation(stream.byteSize(), stream.address()) {
            @Override
            protected void release0() {
                release.run();
            }
        });
        return new DepotArrowReader(null, what, allocator, index, whole, stream);
    }

    /** Arrow Java refuses some schemas only when it makes their vectors (an Int of 0 bits): find out now. */
    private static void checkVectorsCanBeMade(Schema schema, BufferAllocator allocator, String id) {
        try {
            VectorSchemaRoot.create(schema, allocator).close();
        } catch (RuntimeException e) {
            throw new BadStreamException(id + " holds an Arrow schema that Arrow Java cannot read ("
                + schema + "): " + e.getMessage(), e);
        }
    }

    /** The object read, or null for a stream opened over a segment. */
    public ObjectId id() {
        return id;
    }

    public Schema schema() {
        return index.schema();
    }

    /** How many record batches the stream holds. */
    public int batchCount() {
        return index.batches().size();
    }

    /** The row count of batch {@code i}, from its header (nothing is loaded). */
    public long rowCount(int i) {
        return index.batches().get(i).rows();
    }

    /** The address of the object's first byte in this process (for tests and diagnostics). */
    public long address() {
        checkOpen();
        return whole.memoryAddress();
    }

    /**
     * The stream's bytes in shared memory (read-only), which every batch's buffers are slices of: for readers that
     * want to load values themselves rather than through Arrow's vectors. Valid while this reader or a batch it
     * returned is open, like the buffers.
     */
    public MemorySegment segment() {
        checkOpen();
        return data;
    }

    /** The object's size in bytes. */
    public long size() {
        return whole.capacity();
    }

    @Override
    public boolean hasNext() {
        return next < batchCount();
    }

    /** The next batch (see {@link #batch}). */
    @Override
    public VectorSchemaRoot next() {
        if (!hasNext()) {
            throw new NoSuchElementException(what + " has " + batchCount() + " batch(es), all read");
        }
        return batch(next++);
    }

    /**
     * Batch {@code i} as a new root over shared memory; the caller closes it. Its vectors are checked before it is
     * returned: buffer sizes against value counts for fixed-width vectors (a constant cost, so opening is flat in the
     * size), and for the others also their offsets, which readers such as Spark's {@code ArrowColumnVector} follow
     * without bounds checks (one pass over the offsets).
     *
     * @throws BadStreamException when the batch does not match the schema or its buffers are too small
     */
    public VectorSchemaRoot batch(int i) {
        checkOpen();
        StreamIndex.Batch b = index.batches().get(i);
        VectorSchemaRoot root = VectorSchemaRoot.create(index.schema(), allocator);
        try {
            load(root, b);
        } catch (RuntimeException e) {
            root.close();
            throw e instanceof BadStreamException ? e : new BadStreamException("batch " + i + " of the Arrow stream"
                + " in " + what + " does not match its schema " + index.schema() + ": " + e, e);
        }
        return root;
    }

    private void load(VectorSchemaRoot root, StreamIndex.Batch b) {
        // deserializeRecordBatch retains a slice per buffer and then releases one reference of the body it was
        // given: that reference is taken here.
        whole.getReferenceManager().retain();
        ArrowRecordBatch batch;
        try {
            batch = MessageSerializer.deserializeRecordBatch(b.message(), whole.slice(b.bodyOffset(), b.bodyLength()));
        } catch (IOException | RuntimeException e) {
            whole.getReferenceManager().release();
            throw new BadStreamException("cannot read a record batch of " + what + ": " + e.getMessage(), e);
        }
        try (batch) {
            new VectorLoader(root).load(batch);
        }
        for (FieldVector v : root.getFieldVectors()) {
            if (v instanceof BaseFixedWidthVector) {
                ValueVectorUtility.validate(v);  // sizes only: O(1), so open time stays flat in the object's size
            } else {
                ValueVectorUtility.validateFull(v);  // offsets too: readers follow them without bounds checks
            }
        }
    }

    /** Releases the reader's own reference; batches still open keep the object pinned until they close. */
    @Override
    public void close() {
        if (state == State.CLOSED) {
            return;
        }
        state = State.CLOSED;
        whole.close();
    }

    private void checkOpen() {
        if (state != State.OPEN) {
            throw new IllegalStateException("the Arrow reader of " + what + " is closed");
        }
    }
}
