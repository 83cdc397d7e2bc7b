package dev.depot.spark;

import dev.depot.client.DepotClient;
import dev.depot.client.testing.TempStore;
import dev.depot.server.DepotServer;
import java.nio.file.Path;
import org.apache.spark.sql.SparkSession;

/**
 * One Spark session (local[2], UI off) and one Depot store (its daemon embedded in this JVM) for every test of the
 * module: starting Spark costs seconds, so it is done once per test JVM; both go at JVM exit, the store directory
 * with them.
 */
final class SharedSpark {
    private static SharedSpark instance;

    final TempStore temp = new TempStore();
    final DepotClient depot;
    final SparkSession spark;

    private SharedSpark() {
        depot = DepotServer.embedded(temp.dir(), 256L << 20);
        spark = SparkSession.builder()
            .master("local[2]")
            .appName("depot-spark-test")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.driver.host", "localhost")
            .config("spark.plugins", DepotPlugin.class.getName())
            .config(DepotNode.DIR_CONF, temp.dir().toString())
            .config(DepotNode.DAEMON_CONF, "none")
            .getOrCreate();
        Runtime.getRuntime().addShutdownHook(new Thread(this::stop));
    }

    static synchronized SharedSpark get() {
        if (instance == null) {
            instance = new SharedSpark();
        }
        return instance;
    }

    Path dir() {
        return temp.dir();
    }

    private void stop() {
        try {
            spark.stop();
            DepotNode.closeAll();
            depot.close();
        } finally {
            temp.close();
        }
    }
}
