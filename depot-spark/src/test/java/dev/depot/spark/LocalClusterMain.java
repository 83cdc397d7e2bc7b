package dev.depot.spark;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectView;
import dev.depot.client.testing.ClientStores;
import dev.depot.core.clients.ClientTable;
import dev.depot.core.sys.ProcessIdentity;
import java.io.File;
import java.nio.file.Path;
import java.util.List;
import java.util.TreeSet;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * A Spark application on {@code local-cluster[2,1,1024]}: a standalone master and two workers in this JVM, and two
 * executor JVMs that the workers start. {@code LocalClusterMain DIR DATASET} reads the first part of DATASET in two
 * tasks (one per executor, both holding the part open at once) and prints, per task, {@code
 * task PID OBJECT-ID SUM(id) PINNING-PIDS}: its executor's pid, the object it read, what it summed, and the pids that
 * the store's pin table shows pinning anything while both tasks held the part. Then it repartitions rows
 * between the executors through a Depot shuffle ({@link #shuffleBetweenExecutors}) and prints {@code done}.
 *
 * <p>The workers build each executor's command from a Spark home ({@code SPARK_HOME}, which the test points at a
 * directory with an empty {@code jars/}) plus {@code spark.executor.extraClassPath}, here this JVM's class path.
 */
public final class LocalClusterMain {
    private static final long MEET_MILLIS = 120_000;

    private LocalClusterMain() {
    }

    public static void main(String[] args) {
        String dir = args[0];
        String dataset = args[1];
        SparkSession spark = SparkSession.builder().master("local-cluster[2,1,1024]").appName("depot-local-cluster")
            .config("spark.ui.enabled", "false")
            .config("spark.driver.host", "localhost")
            .config("spark.executor.memory", "512m")
            .config("spark.executor.extraClassPath", System.getProperty("java.class.path"))
            .config("spark.executor.extraJavaOptions", String.join(" ", SparkJavaOptions.list())
                + " -XX:+UseSerialGC -XX:TieredStopAtLevel=1")
            .config("spark.scheduler.minRegisteredResourcesRatio", "1.0")  // both executors before the job
            .config("spark.scheduler.maxRegisteredResourcesWaitingTime", "120s")
            .config("spark.plugins", DepotPlugin.class.getName())
            .config(DepotNode.DIR_CONF, dir)
            .config(DepotNode.DAEMON_CONF, "none")
            .getOrCreate();
        try {
            Catalogue.Part part = Catalogue.read(DepotNode.client(Path.of(dir)), dataset).parts().getFirst();
            JavaRDD<Integer> two = new JavaSparkContext(spark.sparkContext()).parallelize(List.of(0, 1), 2);
            List<String> lines = two.map(task -> readHeldByBoth(dir, part, task)).collect();
            lines.forEach(System.out::println);
            for (String point : List.of("pinned", "looked")) {
                for (int task = 0; task < 2; task++) {
                    DepotNode.client(Path.of(dir)).delete(ObjectId.of("local-cluster/" + point + "/" + task));
                }
            }
            shuffleBetweenExecutors(spark);
            System.out.println("done");
        } finally {
            spark.stop();
        }
    }

    /**
     * Repartitions 10,000 rows (4 map tasks, spread over both executors) into 2 partitions by key through a Depot
     * shuffle, and prints {@code shuffled COUNT SUM(id) KEYS-IN-MORE-THAN-ONE-PARTITION REDUCER-PIDS}.
     */
    private static void shuffleBetweenExecutors(SparkSession spark) {
        Dataset<Row> df = spark.range(0, 10_000, 1, 4).selectExpr("id", "id % 13 AS k");
        try (DepotShuffle.Repartitioned byKey = DepotShuffle.repartition(df, 2, "k")) {
            Dataset<Row> out = byKey.dataset();
            Row totals = out.selectExpr("count(*)", "sum(id)").first();
            long split = out.selectExpr("k", "spark_partition_id() AS p").distinct().groupBy("k").count()
                .filter("count > 1").count();
            List<String> reducers = out.javaRDD().mapPartitions(rows -> {
                long n = 0;
                while (rows.hasNext()) {
                    rows.next();
                    n++;
                }
                return List.of(ProcessHandle.current().pid() + ":" + n).iterator();
            }).collect();
            System.out.println("shuffled " + totals.getLong(0) + " " + totals.getLong(1) + " " + split + " "
                + String.join(",", reducers));
        }
    }

    /**
     * Runs in an executor: opens the part, waits until the other task has it open too, looks at the pin table, and
     * waits until the other task has looked before closing it. The two tasks meet through marker objects in the
     * store (a rendezvous that needs nothing but Depot).
     */
    private static String readHeldByBoth(String dir, Catalogue.Part part, int task) {
        DepotClient client = DepotNode.client(DepotNode.directory(dir));
        try (DepotPartitionReader reader = new DepotPartitionReader(dir, List.of("id"), part)) {
            long sum = 0;
            while (reader.next()) {
                ColumnarBatch batch = reader.get();
                for (int i = 0; i < batch.numRows(); i++) {
                    sum += batch.column(0).getLong(i);
                }
            }
            meet(client, "pinned", task);  // both tasks hold the object pinned from here ...
            TreeSet<Integer> pinning = new TreeSet<>();
            ClientTable clients = ClientStores.storeOf(client).clients();
            clients.forEachPin((slot, record) -> pinning.add(ProcessIdentity.pidOf(clients.identity(slot))));
            meet(client, "looked", task);  // ... to here, when both have looked
            return "task " + ProcessHandle.current().pid() + " " + part.objectId() + " " + sum + " "
                + String.join(",", pinning.stream().map(String::valueOf).toList());
        }
    }

    private static void meet(DepotClient client, String point, int task) {
        client.put(ObjectId.of("local-cluster/" + point + "/" + task), new byte[] {1});
        try (ObjectView other = client.get(ObjectId.of("local-cluster/" + point + "/" + (1 - task)), MEET_MILLIS)) {
            if (other.size() != 1) {
                throw new IllegalStateException("unexpected marker " + other);
            }
        }
    }

    /** A Spark home the workers accept: an empty {@code jars/} (the class path comes from extraClassPath). */
    static void makeSparkHome(File home) {
        File jars = new File(home, "jars");
        if (!jars.isDirectory() && !jars.mkdirs()) {
            throw new IllegalStateException("cannot create " + jars);
        }
    }
}
