package dev.depot.spark;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.types.StructType;

/**
 * A scan of one dataset, columns pruned. Parts are packed into input partitions as Spark packs files (up to
 * {@code spark.sql.files.maxPartitionBytes} of data read per partition, or less so that there are at least
 * {@code spark.sql.files.minPartitionNum}, by default the leaf-node parallelism, i.e. the cores), in order and
 * only parts of one host together, each partition preferring that host. Unlike a file, a part costs nothing to
 * open (a pin), so neither {@code openCostInBytes} per part nor as the least split applies. The read option
 * {@code maxPartitionBytes} overrides the configured size.
 */
final class DepotScan implements Scan, Batch {
    /** Read option: the most bytes (of the read columns) an input partition holds, as a size ({@code 256m}). */
    static final String MAX_PARTITION_BYTES_OPTION = "maxPartitionBytes";

    private final Catalogue catalogue;
    private final StructType readSchema;
    private final String dir;
    private final String maxPartitionBytes;

    private DepotScan(Catalogue catalogue, StructType readSchema, String dir, String maxPartitionBytes) {
        this.catalogue = catalogue;
        this.readSchema = readSchema;
        this.dir = dir;
        this.maxPartitionBytes = maxPartitionBytes;
    }

    static final class Builder implements ScanBuilder, SupportsPushDownRequiredColumns {
        private final Catalogue catalogue;
        private final String dir;
        private final String maxPartitionBytes;
        private StructType required;

        Builder(Catalogue catalogue, String dir, String maxPartitionBytes) {
            this.catalogue = catalogue;
            this.dir = dir;
            this.maxPartitionBytes = maxPartitionBytes;
            this.required = catalogue.schema();
        }

        @Override
        public void pruneColumns(StructType requiredSchema) {
            this.required = requiredSchema;
        }

        @Override
        public Scan build() {
            return new DepotScan(catalogue, required, dir, maxPartitionBytes);
        }
    }

    @Override
    public StructType readSchema() {
        return readSchema;
    }

    @Override
    public String description() {
        return "depot:" + catalogue.name() + " (" + catalogue.parts().size() + " parts, " + catalogue.rows() + " rows)";
    }

    @Override
    public Batch toBatch() {
        return this;
    }

    @Override
    public InputPartition[] planInputPartitions() {
        long rowBytes = Math.max(1, readSchema.defaultSize());
        long total = catalogue.rows() * rowBytes;
        SQLConf conf = SQLConf.get();
        long max = maxPartitionBytes != null ? DepotNode.parseBytes(maxPartitionBytes) : conf.filesMaxPartitionBytes();
        int minPartitions = minPartitions(conf);
        long splitBytes = Math.min(max, Math.max(1, (total + minPartitions - 1) / minPartitions));
        return pack(catalogue.parts(), rowBytes, splitBytes).stream().map(DepotInputPartition::new)
            .toArray(InputPartition[]::new);
    }

    /** {@code spark.sql.files.minPartitionNum}, else the leaf-node parallelism (Spark's rule for file scans). */
    private static int minPartitions(SQLConf conf) {
        if (conf.filesMinPartitionNum().isDefined()) {
            return Math.max(1, (Integer) conf.filesMinPartitionNum().get());
        }
        String leaf = conf.getConfString("spark.sql.leafNodeDefaultParallelism", null);
        if (leaf != null) {
            return Math.max(1, Integer.parseInt(leaf.trim()));
        }
        SparkSession active = SparkSession.getActiveSession().getOrElse(() -> null);
        return active == null ? 1 : Math.max(1, active.sparkContext().defaultParallelism());
    }

    /**
     * Packs {@code parts} in order into groups of at most {@code splitBytes} (a part larger than that is a group of
     * its own), starting a new group where the host changes.
     */
    static List<List<Catalogue.Part>> pack(List<Catalogue.Part> parts, long rowBytes, long splitBytes) {
        List<List<Catalogue.Part>> groups = new ArrayList<>();
        List<Catalogue.Part> group = new ArrayList<>();
        long bytes = 0;
        for (Catalogue.Part p : parts) {
            long size = p.rows() * rowBytes;
            if (!group.isEmpty() && (bytes + size > splitBytes || !group.getFirst().host().equals(p.host()))) {
                groups.add(group);
                group = new ArrayList<>();
                bytes = 0;
            }
            group.add(p);
            bytes += size;
        }
        if (!group.isEmpty()) {
            groups.add(group);
        }
        return groups;
    }

    @Override
    public PartitionReaderFactory createReaderFactory() {
        return new DepotReaderFactory(dir, Arrays.asList(readSchema.fieldNames()));
    }
}
