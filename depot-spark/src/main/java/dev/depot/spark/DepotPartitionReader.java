package dev.depot.spark;

import dev.depot.arrow.DepotArrow;
import dev.depot.arrow.DepotArrowReader;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * Reads one input partition, one or more parts in order: each Arrow batch of a part becomes a {@link ColumnarBatch}
 * over the shared memory (no copy; {@link DepotColumnVector#columnsOf}). A part is pinned from when its first batch
 * is asked for until the reader moves to the next part or closes; a batch is valid until the next call to
 * {@link #next} (Spark's contract). Closed by Spark when the task ends, and by {@link TaskPins} in any case.
 */
final class DepotPartitionReader implements PartitionReader<ColumnarBatch> {
    private final String dir;
    private final List<Catalogue.Part> parts;
    private final List<String> columns;
    private final BufferAllocator allocator;
    private int nextPart;
    private Catalogue.Part part;
    private DepotArrowReader reader;
    private VectorSchemaRoot root;
    private ColumnarBatch batch;
    private boolean closed;

    DepotPartitionReader(String dir, List<String> columns, Catalogue.Part part) {
        this(dir, columns, List.of(part));
    }

    DepotPartitionReader(String dir, List<String> columns, List<Catalogue.Part> parts) {
        if (parts.isEmpty()) {
            throw new IllegalArgumentException("an input partition of a Depot dataset has at least one part");
        }
        this.dir = dir;
        this.parts = List.copyOf(parts);
        this.columns = columns;
        this.allocator = DepotNode.allocator().newChildAllocator("depot-read-" + parts.getFirst().id(), 0,
            Long.MAX_VALUE);
        try {
            openNextPart();
        } catch (RuntimeException e) {
            allocator.close();
            throw e;
        }
        TaskPins.register(this);
    }

    private void openNextPart() {
        part = parts.get(nextPart++);
        try {
            reader = DepotArrow.open(DepotNode.client(DepotNode.directory(dir)), part.objectId(), allocator);
        } catch (RuntimeException e) {
            throw new IllegalStateException("cannot read part " + part.id() + " (written on " + part.host()
                + "): " + e.getMessage(), e);
        }
    }

    @Override
    public boolean next() {
        closeBatch();
        while (!reader.hasNext()) {
            if (nextPart == parts.size()) {
                return false;
            }
            reader.close();
            reader = null;
            openNextPart();
        }
        root = reader.next();
        batch = new ColumnarBatch(DepotColumnVector.columnsOf(root, columns, reader.segment(), "part " + part.id()),
            root.getRowCount());
        return true;
    }

    @Override
    public ColumnarBatch get() {
        return batch;
    }

    /** The current part's address in this process (for tests: the batches' buffers lie inside it). */
    long objectAddress() {
        return reader.address();
    }

    long objectSize() {
        return reader.size();
    }

    private void closeBatch() {
        if (batch != null) {
            DepotColumnVector.closeColumnsOf(batch);  // before the root lets go of the memory under them
            batch = null;
        }
        if (root != null) {
            root.close();
            root = null;
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            closeBatch();
            if (reader != null) {
                reader.close();
            }
        } finally {
            allocator.close();
        }
    }
}
