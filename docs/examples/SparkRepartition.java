import dev.depot.spark.DepotShuffle;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/** Repartitions a dataset by user through a Depot shuffle, then reads the partitions twice. */
public class SparkRepartition {
    public static void main(String[] args) throws Exception {
        try (SparkSession spark = SparkSession.builder().appName("by-user").getOrCreate()) {
            System.out.println(usersPerPartition(spark));
        }
    }

    static long usersPerPartition(SparkSession spark) {
        Dataset<Row> events = spark.range(0, 1000).selectExpr("id", "id % 10 AS user");
        try (DepotShuffle.Repartitioned byUser = DepotShuffle.repartition(events, 4, "user")) {
            Dataset<Row> df = byUser.dataset(); // 4 partitions; equal "user" values in one partition
            df.groupBy("user").count().show(); // read it as often as needed ...
            return df.selectExpr("user", "spark_partition_id() AS p").distinct().groupBy("user").count()
                .filter("count > 1").count(); // 0: no user is in two partitions
        } // ... until close, which deletes the shuffle's objects
    }
}
