package dev.depot.spark;

import dev.depot.arrow.DepotArrow;
import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.execution.arrow.ArrowWriter;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.ArrowUtils;
import org.apache.spark.util.Utils;

/**
 * Writes one task's rows: Spark's own {@code ArrowWriter} fills a batch of up to {@code maxRows} rows (or about
 * {@code maxBytes}), which {@link DepotArrow#put} copies once into a new object; the commit message lists the objects.
 */
final class DepotDataWriter implements DataWriter<InternalRow> {
    /** How often (in rows) the batch's size is looked at. */
    private static final int SIZE_CHECK_EVERY = 4096;

    /** What a task wrote, for the driver's commit. */
    record Committed(List<Catalogue.Part> parts) implements WriterCommitMessage {
    }

    record Factory(String name, String dir, String writeId, StructType schema, String timeZone, int maxRows,
                   long maxBytes) implements DataWriterFactory {
        @Override
        public DataWriter<InternalRow> createWriter(int partitionId, long taskId) {
            return new DepotDataWriter(this, partitionId, taskId);
        }
    }

    private final Factory f;
    private final int partitionId;
    private final long taskId;
    private final DepotClient client;
    private final String host = Utils.localHostName();
    private final BufferAllocator allocator;
    private final VectorSchemaRoot root;
    private final ArrowWriter writer;
    private final List<Catalogue.Part> parts = new ArrayList<>();
    private int rows;

    private DepotDataWriter(Factory f, int partitionId, long taskId) {
        this.f = f;
        this.partitionId = partitionId;
        this.taskId = taskId;
        this.client = DepotNode.client(DepotNode.directory(f.dir()));
        this.allocator = DepotNode.allocator().newChildAllocator("depot-write-" + taskId, 0, Long.MAX_VALUE);
        this.root = VectorSchemaRoot.create(ArrowUtils.toArrowSchema(f.schema(), f.timeZone(), true, false), allocator);
        this.writer = ArrowWriter.create(root);
    }

    @Override
    public void write(InternalRow row) {
        writer.write(row);
        rows++;
        if (rows >= f.maxRows() || (rows % SIZE_CHECK_EVERY == 0 && writer.sizeInBytes() >= f.maxBytes())) {
            flush();
        }
    }

    private void flush() {
        writer.finish();
        ObjectId id = Catalogue.partId(f.name(), f.writeId(), partitionId, taskId, parts.size());
        DepotArrow.put(client, id, root);
        parts.add(new Catalogue.Part(id.toHex(), rows, host));
        writer.reset();
        rows = 0;
    }

    @Override
    public WriterCommitMessage commit() {
        if (rows > 0) {
            flush();
        }
        return new Committed(List.copyOf(parts));
    }

    @Override
    public void abort() {
        for (Catalogue.Part p : parts) {
            client.delete(p.objectId());
        }
        parts.clear();
    }

    @Override
    public void close() {
        try {
            root.close();
        } finally {
            allocator.close();
        }
    }
}
