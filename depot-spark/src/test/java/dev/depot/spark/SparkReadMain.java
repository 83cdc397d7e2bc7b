package dev.depot.spark;

import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * A second Spark application (a child JVM): {@code SparkReadMain DIR READ WRITE ROWS} reads dataset READ from the
 * store in DIR and prints {@code read COUNT SUM(id)} (skipped when READ is {@code -}), then writes dataset WRITE
 * ({@code id, id * 0.5 AS x} for ROWS rows, in 3 partitions) and prints {@code wrote ROWS}.
 */
public final class SparkReadMain {
    private SparkReadMain() {
    }

    public static void main(String[] args) {
        SparkSession spark = SparkSession.builder().master("local[1]").appName("depot-second-application")
            .config("spark.ui.enabled", "false")
            .config("spark.driver.host", "localhost")
            .config("spark.plugins", DepotPlugin.class.getName())
            .config(DepotNode.DIR_CONF, args[0])
            .config(DepotNode.DAEMON_CONF, "none")
            .getOrCreate();
        try {
            if (!args[1].equals("-")) {
                Row r = spark.read().format("depot").load(args[1]).selectExpr("count(*)", "sum(id)").first();
                System.out.println("read " + r.getLong(0) + " " + r.getLong(1));
            }
            long rows = Long.parseLong(args[3]);
            spark.range(0, rows, 1, 3).selectExpr("id", "id * 0.5D AS x")
                .write().format("depot").mode("overwrite").save(args[2]);
            System.out.println("wrote " + rows);
        } finally {
            spark.stop();
        }
    }
}
