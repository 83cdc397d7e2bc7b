package dev.depot.spark;

import dev.depot.arrow.DepotArrow;
import dev.depot.arrow.DepotArrowReader;
import dev.depot.errors.ObjectMissingException;
import dev.depot.shuffle.Shuffle;
import dev.depot.shuffle.ShuffleReader;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * Reads one partition of a Depot shuffle: every map's slice (an Arrow stream, or nothing) in map order, each batch
 * a {@link ColumnarBatch} over the pinned shared memory ({@link DepotColumnVector#columnsOf}). The slices stay pinned until
 * the reader closes (by Spark at the task's end, and by {@link TaskPins} in any case).
 */
final class ShufflePartitionReader implements PartitionReader<ColumnarBatch> {
    private final String shuffleId;
    private final int partition;
    private final List<String> columns;
    private final BufferAllocator allocator;
    private final Shuffle shuffle;
    private final ShuffleReader reader;
    private int nextMap;
    private DepotArrowReader slice;
    private VectorSchemaRoot root;
    private ColumnarBatch batch;
    private boolean closed;

    ShufflePartitionReader(String dir, String shuffleId, int partition, List<String> columns) {
        this.shuffleId = shuffleId;
        this.partition = partition;
        this.columns = columns;
        this.allocator = DepotNode.allocator().newChildAllocator("depot-shuffle-read-" + partition, 0, Long.MAX_VALUE);
        try {
            this.shuffle = openShuffle(dir, shuffleId);
            this.reader = shuffle.reader(partition, DepotShuffle.READ_TIMEOUT_MILLIS);
        } catch (RuntimeException e) {
            close();
            throw e;
        }
        TaskPins.register(this);
    }

    /** Every map committed before the Dataset existed, so a missing manifest means the shuffle was closed. */
    private static Shuffle openShuffle(String dir, String shuffleId) {
        try {
            return Shuffle.open(DepotNode.client(Path.of(dir)), shuffleId, 0);
        } catch (ObjectMissingException e) {
            throw new IllegalStateException("the Depot shuffle " + shuffleId + " is closed (DepotShuffle.Repartitioned"
                + ".close deletes it): repartition again to read it", e);
        }
    }

    @Override
    public boolean next() {
        closeBatch();
        while (slice == null || !slice.hasNext()) {
            closeSlice();
            if (nextMap == shuffle.maps()) {
                return false;
            }
            int map = nextMap++;
            MemorySegment bytes = reader.slice(map);
            if (bytes.byteSize() > 0) {
                slice = DepotArrow.read(bytes, "partition " + partition + " of map " + map + " in shuffle "
                    + shuffleId, allocator, () -> { });  // the reader's pins outlive it: released at close
            }
        }
        root = slice.next();
        batch = new ColumnarBatch(DepotColumnVector.columnsOf(root, columns, slice.segment(), "shuffle " + shuffleId),
            root.getRowCount());
        return true;
    }

    @Override
    public ColumnarBatch get() {
        return batch;
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

    private void closeSlice() {
        if (slice != null) {
            slice.close();
            slice = null;
        }
    }

    /** Closes the batch and the slice first, then lets go of the pins. Closing twice is harmless. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            closeBatch();
            closeSlice();
            if (reader != null) {
                reader.close();
            }
            if (shuffle != null) {
                shuffle.close();
            }
        } finally {
            allocator.close();
        }
    }
}
