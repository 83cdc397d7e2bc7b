package dev.depot.spark;

import dev.depot.arrow.DepotArrow;
import dev.depot.arrow.DepotArrowReader;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * Reads one part: each Arrow batch of the object becomes a {@link ColumnarBatch} of {@link ArrowColumnVector}s over
 * the shared memory (no copy). The object is pinned while the reader is open; a batch is valid until the next call
 * to {@link #next} (Spark's contract). Closed by Spark when the task ends, and by {@link TaskPins} in any case.
 */
final class DepotPartitionReader implements PartitionReader<ColumnarBatch> {
    private final Catalogue.Part part;
    private final List<String> columns;
    private final BufferAllocator allocator;
    private final DepotArrowReader reader;
    private VectorSchemaRoot root;
    private ColumnarBatch batch;
    private boolean closed;

    DepotPartitionReader(String dir, List<String> columns, Catalogue.Part part) {
        this.part = part;
        this.columns = columns;
        this.allocator = DepotNode.allocator().newChildAllocator("depot-read-" + part.id(), 0, Long.MAX_VALUE);
        try {
            this.reader = DepotArrow.open(DepotNode.client(DepotNode.directory(dir)), part.objectId(), allocator);
        } catch (RuntimeException e) {
            allocator.close();
            throw new IllegalStateException("cannot read part " + part.id() + " (written on " + part.host()
                + "): " + e.getMessage(), e);
        }
        TaskPins.register(this);
    }

    @Override
    public boolean next() {
        closeBatch();
        if (!reader.hasNext()) {
            return false;
        }
        root = reader.next();
        ColumnVector[] vectors = new ColumnVector[columns.size()];
        for (int i = 0; i < vectors.length; i++) {
            FieldVector v = root.getVector(columns.get(i));
            if (v == null) {
                throw new IllegalStateException("part " + part.id() + " has no column '" + columns.get(i) + "'");
            }
            vectors[i] = new ArrowColumnVector(v);
        }
        batch = new ColumnarBatch(vectors, root.getRowCount());
        return true;
    }

    @Override
    public ColumnarBatch get() {
        return batch;
    }

    /** The object's address in this process (for tests: the batches' buffers lie inside it). */
    long objectAddress() {
        return reader.address();
    }

    long objectSize() {
        return reader.size();
    }

    private void closeBatch() {
        batch = null;
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
            reader.close();
        } finally {
            allocator.close();
        }
    }
}
