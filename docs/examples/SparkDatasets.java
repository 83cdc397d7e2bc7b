import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/** Saves a dataset in the node's Depot store and reads it back: any application on the node can read it. */
public class SparkDatasets {
    public static void main(String[] args) throws Exception {
        try (SparkSession spark = SparkSession.builder().appName("events").getOrCreate()) {
            System.out.println(saveAndCount(spark) + " events of user 3");
        }
    }

    static long saveAndCount(SparkSession spark) {
        Dataset<Row> events = spark.range(0, 1000).selectExpr("id", "id % 10 AS user");
        events.write().format("depot").mode("overwrite").save("events"); // or mode("append")
        Dataset<Row> back = spark.read().format("depot").load("events"); // this application or any other on the node
        return back.filter("user = 3").count();
    }
}
