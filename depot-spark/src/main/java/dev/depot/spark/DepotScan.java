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
 *
 * <p>Unless a size is given (the read option, or {@code spark.sql.files.maxPartitionBytes} set explicitly), a scan
 * also has at most {@link #PARTITIONS_PER_CORE} partitions per core: a file scan splits finely to overlap reads
 * and decoding with other tasks, but a part is read in place, so more tasks than that add only their fixed cost
 * (scheduling, (de)serialising the task, a shuffle file per map task), which for a 1 GiB scan on 2 cores was
 * most of a query's time (see docs/SPARK.md). Two per core rather than one keeps
 * some balancing when a core is busy with something else.
 */
final class DepotScan implements Scan, Batch {
    /** Read option: the most bytes (of the read columns) an input partition holds, as a size ({@code 256m}). */
    static final String MAX_PARTITION_BYTES_OPTION = "maxPartitionBytes";
    /** Without a configured size, a scan has at most this many input partitions per core (see the class comment). */
    static final int PARTITIONS_PER_CORE = 2;
    private static final String MAX_PARTITION_BYTES_CONF = "spark.sql.files.maxPartitionBytes";

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
        boolean sizeGiven = maxPartitionBytes != null || conf.contains(MAX_PARTITION_BYTES_CONF);
        long splitBytes = splitBytes(total, max, minPartitions(conf), !sizeGiven);
        return pack(catalogue.parts(), rowBytes, splitBytes).stream().map(DepotInputPartition::new)
            .toArray(InputPartition[]::new);
    }

    /**
     * How many bytes an input partition holds: Spark's rule for files ({@code max}, or less so that there are at
     * least {@code minPartitions}), and, when {@code capped}, at least enough that there are at most
     * {@link #PARTITIONS_PER_CORE} per core ({@code minPartitions} being the cores unless configured).
     */
    static long splitBytes(long total, long max, int minPartitions, boolean capped) {
        long split = Math.min(max, Math.max(1, ceilDiv(total, minPartitions)));
        return capped ? Math.max(split, ceilDiv(total, (long) PARTITIONS_PER_CORE * minPartitions)) : split;
    }

    private static long ceilDiv(long a, long b) {
        return Math.max(1, (a + b - 1) / b);
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
