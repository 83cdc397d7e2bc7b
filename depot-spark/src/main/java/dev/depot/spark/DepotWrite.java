package dev.depot.spark;

import dev.depot.client.DepotClient;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.SupportsTruncate;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.StructType;

/**
 * A batch write of one dataset: tasks write their rows as Arrow objects ({@link DepotDataWriter}); the driver's
 * commit publishes the catalogue listing them (appended to the previous one, or replacing it on overwrite, whose
 * old parts are then deleted: readers holding them keep them until they close). Abort deletes what was written.
 */
final class DepotWrite implements Write, BatchWrite {
    static final String MAX_ROWS_OPTION = "maxRowsPerObject";
    static final int MAX_ROWS_DEFAULT = 1 << 20;
    static final String MAX_BYTES_OPTION = "maxBytesPerObject";
    static final long MAX_BYTES_DEFAULT = 128L << 20;

    private final String name;
    private final String dir;
    private final StructType schema;
    private final boolean truncate;
    private final int maxRows;
    private final long maxBytes;
    private final String writeId = UUID.randomUUID().toString();

    private DepotWrite(String name, String dir, LogicalWriteInfo info, boolean truncate) {
        this.name = name;
        this.dir = dir;
        this.schema = info.schema();
        this.truncate = truncate;
        this.maxRows = info.options().getInt(MAX_ROWS_OPTION, MAX_ROWS_DEFAULT);
        this.maxBytes = DepotNode.parseBytes(info.options().getOrDefault(MAX_BYTES_OPTION, Long.toString(MAX_BYTES_DEFAULT)));
    }

    static final class Builder implements WriteBuilder, SupportsTruncate {
        private final String name;
        private final String dir;
        private final LogicalWriteInfo info;
        private boolean truncate;

        Builder(String name, String dir, LogicalWriteInfo info) {
            this.name = name;
            this.dir = dir;
            this.info = info;
        }

        @Override
        public WriteBuilder truncate() {
            truncate = true;
            return this;
        }

        @Override
        public Write build() {
            return new DepotWrite(name, dir, info, truncate);
        }
    }

    @Override
    public BatchWrite toBatch() {
        return this;
    }

    @Override
    public DataWriterFactory createBatchWriterFactory(PhysicalWriteInfo info) {
        return new DepotDataWriter.Factory(name, dir, writeId, schema, SQLConf.get().sessionLocalTimeZone(), maxRows,
            maxBytes);
    }

    @Override
    public void commit(WriterCommitMessage[] messages) {
        DepotClient client = DepotNode.client(DepotNode.directory(dir));
        Catalogue previous = Catalogue.read(client, name);
        List<Catalogue.Part> parts = new ArrayList<>();
        if (previous != null && !truncate) {
            if (!previous.schema().equals(schema)) {
                abort(messages);
                throw new IllegalArgumentException("cannot append to Depot dataset '" + name + "': its schema is "
                    + previous.schema().simpleString() + ", not " + schema.simpleString() + "; overwrite it instead");
            }
            parts.addAll(previous.parts());
        }
        for (WriterCommitMessage m : messages) {
            parts.addAll(((DepotDataWriter.Committed) m).parts());
        }
        new Catalogue(name, schema, List.copyOf(parts)).publish(client);
        if (previous != null && truncate) {
            Set<String> kept = new HashSet<>();
            parts.forEach(p -> kept.add(p.id()));
            for (Catalogue.Part old : previous.parts()) {
                if (!kept.contains(old.id())) {
                    client.delete(old.objectId());
                }
            }
        }
    }

    @Override
    public void abort(WriterCommitMessage[] messages) {
        DepotClient client = DepotNode.client(DepotNode.directory(dir));
        for (WriterCommitMessage m : messages) {
            if (m instanceof DepotDataWriter.Committed c) {
                c.parts().forEach(p -> client.delete(p.objectId()));
            }
        }
    }
}
