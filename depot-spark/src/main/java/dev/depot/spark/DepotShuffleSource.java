package dev.depot.spark;

import java.util.Arrays;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.stream.IntStream;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * The reduce side of {@link DepotShuffle}: a table whose input partition {@code p} is partition {@code p} of a Depot
 * shuffle, read from every map's slice in place. Made by {@code DepotShuffle.repartition} (the schema is given, not
 * inferred); options {@code shuffle}, {@code partitions}, {@code dir}.
 */
public final class DepotShuffleSource implements TableProvider {
    static final String SHUFFLE_OPTION = "shuffle";
    static final String PARTITIONS_OPTION = "partitions";

    @Override
    public StructType inferSchema(CaseInsensitiveStringMap options) {
        throw new IllegalArgumentException("a Depot shuffle is read through DepotShuffle.repartition, which gives the "
            + "schema");
    }

    @Override
    public boolean supportsExternalMetadata() {
        return true;
    }

    @Override
    public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
        CaseInsensitiveStringMap o = new CaseInsensitiveStringMap(properties);
        return new ShuffleTable(o.get(SHUFFLE_OPTION), Integer.parseInt(o.get(PARTITIONS_OPTION)),
            o.get(DepotDataSource.DIR_OPTION), schema);
    }

    record ShuffleTable(String shuffleId, int partitions, String dir, StructType schema) implements SupportsRead {
        @Override
        public String name() {
            return "depot-shuffle:" + shuffleId;
        }

        /** Spark 4 deprecates {@code schema()} for {@code columns()}, whose default implementation calls it. */
        @Override
        @SuppressWarnings("deprecation")
        public StructType schema() {
            return schema;
        }

        @Override
        public Set<TableCapability> capabilities() {
            return EnumSet.of(TableCapability.BATCH_READ);
        }

        @Override
        public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
            return new ShuffleScan(this, schema);
        }
    }

    /** One input partition per shuffle partition; columns pruned. */
    static final class ShuffleScan implements ScanBuilder, SupportsPushDownRequiredColumns, Scan, Batch {
        private final ShuffleTable table;
        private StructType readSchema;

        ShuffleScan(ShuffleTable table, StructType readSchema) {
            this.table = table;
            this.readSchema = readSchema;
        }

        @Override
        public void pruneColumns(StructType required) {
            readSchema = required;
        }

        @Override
        public Scan build() {
            return this;
        }

        @Override
        public StructType readSchema() {
            return readSchema;
        }

        @Override
        public String description() {
            return table.name() + " (" + table.partitions() + " partitions)";
        }

        @Override
        public Batch toBatch() {
            return this;
        }

        @Override
        public InputPartition[] planInputPartitions() {
            return IntStream.range(0, table.partitions()).mapToObj(ShufflePartition::new)
                .toArray(InputPartition[]::new);
        }

        @Override
        public PartitionReaderFactory createReaderFactory() {
            return new Factory(table.dir(), table.shuffleId(), Arrays.asList(readSchema.fieldNames()));
        }
    }

    record ShufflePartition(int partition) implements InputPartition {
    }

    record Factory(String dir, String shuffleId, java.util.List<String> columns) implements PartitionReaderFactory {
        @Override
        public boolean supportColumnarReads(InputPartition partition) {
            return true;
        }

        @Override
        public PartitionReader<InternalRow> createReader(InputPartition partition) {
            throw new UnsupportedOperationException("a Depot shuffle is read as columnar batches only");
        }

        @Override
        public PartitionReader<ColumnarBatch> createColumnarReader(InputPartition partition) {
            return new ShufflePartitionReader(dir, shuffleId, ((ShufflePartition) partition).partition(), columns);
        }
    }
}
