package dev.depot.spark;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.hash;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.pmod;

import dev.depot.client.DepotClient;
import dev.depot.shuffle.Shuffle;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.UUID;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.rdd.RDD;

/**
 * Repartitions a Dataset by key through a Depot shuffle ({@code dev.depot.shuffle}) instead of Spark's own shuffle
 * files: every map task (a partition of the input) turns its rows into one Arrow stream per target partition and
 * writes them, with one copy, into its shuffle object in the node's shared memory; every reduce task reads its
 * partition's slice of every map in place (Arrow batches over the shared memory, no copy, no socket, no disk).
 * For Spark jobs whose executors share one node (local mode, or {@code local-cluster} and a standalone cluster of
 * one machine); see {@code docs/SPARK.md}.
 *
 * <pre>{@code
 * try (DepotShuffle.Repartitioned byUser = DepotShuffle.repartition(events, 8, "user")) {
 *     byUser.dataset().groupBy("user").count().show();   // read as often as needed until closed
 * }                                                        // close: the shuffle's objects are deleted
 * }</pre>
 *
 * Rows go to partition {@code pmod(hash(keys), partitions)} (Spark's Murmur3 {@code hash}, as
 * {@code repartition(n, cols)} uses), so equal keys meet in one partition. The map stage runs when
 * {@link #repartition} is called (one Spark job); the result is a Dataset over the shuffle's objects, which live
 * until {@link Repartitioned#close}.
 */
public final class DepotShuffle {
    /** How long a reduce task waits for the maps (they have all committed when {@code repartition} returns). */
    static final long READ_TIMEOUT_MILLIS = 60_000;
    private static final String PARTITION_COLUMN = "__depot_shuffle_partition";

    private DepotShuffle() {
    }

    /** A repartitioned Dataset and the Depot shuffle that holds it; closing deletes the shuffle's objects. */
    public static final class Repartitioned implements AutoCloseable {
        private final Shuffle shuffle;
        private final Dataset<Row> dataset;

        private Repartitioned(Shuffle shuffle, Dataset<Row> dataset) {
            this.shuffle = shuffle;
            this.dataset = dataset;
        }

        /** The rows, in {@code partitions} partitions by key; valid until {@link #close}. */
        public Dataset<Row> dataset() {
            return dataset;
        }

        /** The Depot shuffle id (its objects are named from it: {@code docs/SHUFFLE.md}). */
        public String shuffleId() {
            return shuffle.id();
        }

        /** Deletes the shuffle's objects (a reader still holding one keeps it until it lets go). */
        @Override
        public void close() {
            shuffle.close();
        }
    }

    /**
     * Repartitions {@code df} into {@code partitions} partitions by {@code keys} through a Depot shuffle in the store
     * of {@code spark.depot.dir}. Runs the map stage now.
     *
     * @throws IllegalArgumentException without keys or with fewer than one partition
     */
    public static Repartitioned repartition(Dataset<Row> df, int partitions, String... keys) {
        if (keys.length == 0 || partitions < 1) {
            throw new IllegalArgumentException("repartition through Depot needs at least one key column and one "
                + "partition, got keys " + Arrays.toString(keys) + " and " + partitions + " partitions");
        }
        SparkSession spark = df.sparkSession();
        String dir = DepotNode.directory(spark.sparkContext().getConf().get(DepotNode.DIR_CONF, null)).toString();
        DepotClient client = DepotNode.client(Path.of(dir));
        String id = "spark/" + spark.sparkContext().applicationId() + "/" + UUID.randomUUID();
        Column[] keyColumns = Arrays.stream(keys).map(k -> col(k)).toArray(Column[]::new);
        Dataset<Row> keyed = df.withColumn(PARTITION_COLUMN, pmod(hash(keyColumns), lit(partitions)));
        RDD<InternalRow> rows = keyed.queryExecution().toRdd();
        Shuffle shuffle = Shuffle.create(client, id, rows.getNumPartitions(), partitions);
        try {
            String timeZone = spark.sessionState().conf().sessionLocalTimeZone();
            rows.toJavaRDD().foreachPartition(new ShuffleMapTask(dir, id, df.schema(), timeZone, partitions));
            Dataset<Row> out = spark.read().format(DepotShuffleSource.class.getName())
                .option(DepotShuffleSource.SHUFFLE_OPTION, id)
                .option(DepotShuffleSource.PARTITIONS_OPTION, partitions)
                .option(DepotDataSource.DIR_OPTION, dir)
                .schema(df.schema())
                .load();
            return new Repartitioned(shuffle, out);
        } catch (RuntimeException e) {
            shuffle.close();
            throw e;
        }
    }
}
