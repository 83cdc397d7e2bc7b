package dev.depot.spark;

import static org.junit.jupiter.api.Assertions.*;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectInfo;
import dev.depot.client.testing.ChildJvm;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.spark.SparkException;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.junit.jupiter.api.Test;

class DepotSourceTest {
    private final SharedSpark shared = SharedSpark.get();
    private final SparkSession spark = shared.spark;
    private final DepotClient depot = shared.depot;

    private Dataset<Row> sample(long rows, int partitions) {
        return spark.range(0, rows, 1, partitions)
            .selectExpr("id", "id * 0.5D AS x", "CAST(id AS STRING) AS s", "IF(id % 7 = 0, NULL, id) AS n");
    }

    private void assertNoPins() {
        List<ObjectInfo> pinned = depot.list().stream().filter(i -> i.pinCount() > 0).toList();
        assertEquals(List.of(), pinned, "objects still pinned");
    }

    @Test
    void shouldWriteAndReadBackADataFrame() {
        sample(10_000, 4).write().format("depot").mode(SaveMode.Overwrite).save("round-trip");
        Catalogue c = Catalogue.read(depot, "round-trip");
        assertEquals(4, c.parts().size());
        assertEquals(10_000, c.rows());
        Dataset<Row> back = spark.read().format("depot").load("round-trip");
        assertEquals(sample(1, 1).schema(), back.schema());
        Row r = back.selectExpr("count(*)", "sum(id)", "sum(x)", "count(n)", "max(length(s))").first();
        assertEquals(10_000L, r.getLong(0));
        assertEquals(49_995_000L, r.getLong(1));
        assertEquals(24_997_500.0, r.getDouble(2));
        assertEquals(10_000L - 1429, r.getLong(3));
        assertEquals(4, r.getInt(4));
        assertEquals(0, back.except(sample(10_000, 2)).count(), "the same rows");
        assertNoPins();
    }

    @Test
    void shouldReadColumnarBatchesOverTheObjectsSharedMemory() {
        sample(1000, 1).write().format("depot").mode("overwrite").save("zero-copy");
        Catalogue.Part part = Catalogue.read(depot, "zero-copy").parts().getFirst();
        try (DepotPartitionReader reader = new DepotPartitionReader(shared.dir().toString(), List.of("x", "s"), part)) {
            assertTrue(reader.next());
            ColumnarBatch batch = reader.get();
            assertEquals(1000, batch.numRows());
            assertEquals(499.5, batch.column(0).getDouble(999));
            assertEquals("999", batch.column(1).getUTF8String(999).toString());
            // the double column is read straight from the segment, the string column through Arrow's vector
            MemorySegment x = assertInstanceOf(DepotColumnVector.class, batch.column(0)).values();
            ArrowBuf s = assertInstanceOf(ArrowColumnVector.class, batch.column(1)).getValueVector().getDataBuffer();
            long[][] ranges = {{x.address(), x.byteSize()}, {s.memoryAddress(), s.capacity()}};
            for (long[] r : ranges) {
                assertTrue(r[0] >= reader.objectAddress() && r[0] + r[1] <= reader.objectAddress() + reader.objectSize(),
                    "a column lies in the object's shared memory");
            }
            assertEquals(1, depot.list().stream().filter(i -> i.id().equals(part.objectId())).findFirst()
                .orElseThrow().pinCount());
            assertFalse(reader.next());
        }
        assertNoPins();
    }

    @Test
    void shouldAppendAndOverwriteDeletingReplacedParts() {
        sample(100, 2).write().format("depot").mode("overwrite").save("grows");
        sample(50, 1).write().format("depot").mode("append").save("grows");
        assertEquals(150, spark.read().format("depot").load("grows").count());
        List<Catalogue.Part> old = new ArrayList<>(Catalogue.read(depot, "grows").parts());
        sample(10, 1).write().format("depot").mode("overwrite").save("grows");
        assertEquals(10, spark.read().format("depot").load("grows").count());
        for (Catalogue.Part p : old) {
            assertFalse(depot.contains(p.objectId()), "replaced part " + p.id() + " was deleted");
        }
        var e = assertThrows(Exception.class,
            () -> spark.range(3).write().format("depot").mode("append").save("grows"));
        assertTrue(String.valueOf(e.getMessage()).contains("schema"), e.getMessage());
        assertEquals(10, spark.read().format("depot").load("grows").count(), "a failed append changes nothing");
    }

    @Test
    void shouldReadEveryFixedWidthTypeAndItsNullsFromTheSegment() {
        Dataset<Row> typed = spark.range(0, 3000, 1, 2).selectExpr(
            "CAST(id % 100 AS TINYINT) AS b", "CAST(id AS SMALLINT) AS sh", "CAST(id AS INT) AS i", "id AS l",
            "CAST(id AS FLOAT) / 4 AS f", "id / 8D AS d", "id % 3 = 0 AS z", "DATE_ADD(DATE'2020-01-01', CAST(id AS INT)) AS dt",
            "TIMESTAMP_MICROS(id * 1000003) AS ts", "CAST(TIMESTAMP_MICROS(id) AS TIMESTAMP_NTZ) AS ntz",
            "IF(id % 5 = 0, NULL, id) AS ln", "IF(id % 7 = 0, NULL, id % 2 = 0) AS zn", "IF(id % 11 = 0, NULL, id / 3D) AS dn");
        typed.write().format("depot").mode("overwrite").save("typed");
        Dataset<Row> back = spark.read().format("depot").load("typed");
        assertEquals(typed.schema(), back.schema());
        assertEquals(0, back.exceptAll(typed).count(), "the same rows, nulls included");
        assertEquals(0, typed.exceptAll(back).count());
        Catalogue.Part part = Catalogue.read(depot, "typed").parts().getFirst();
        try (DepotPartitionReader reader = new DepotPartitionReader(shared.dir().toString(),
            List.of(typed.columns()), part)) {
            assertTrue(reader.next());
            ColumnarBatch batch = reader.get();
            for (int c = 0; c < batch.numCols(); c++) {
                assertInstanceOf(DepotColumnVector.class, batch.column(c), typed.columns()[c]);
            }
            assertEquals(300, batch.column(10).numNulls());
            assertTrue(batch.column(10).isNullAt(0) && !batch.column(10).isNullAt(1));
            assertFalse(batch.column(3).hasNull());
            assertThrows(IndexOutOfBoundsException.class, () -> batch.column(3).getLong(batch.numRows()),
                "reads are bounds-checked against the column's slice of the object");
        }
        assertNoPins();
    }

    @Test
    void shouldPackPartsIntoInputPartitionsPerHost() {
        List<Catalogue.Part> parts = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            parts.add(new Catalogue.Part("%040x".formatted(i), 1 << 20, i < 15 ? "a" : "b"));
        }
        List<Integer> sizes = DepotScan.pack(parts, 64, 128L << 20).stream().map(List::size).toList();
        assertEquals(List.of(2, 2, 2, 2, 2, 2, 2, 1, 1), sizes, "two 64 MiB parts per 128 MiB; hosts apart");
        assertEquals(16, DepotScan.pack(parts, 64, 1).size(), "a part larger than the split is alone");
        long gib = 1L << 30;
        assertEquals(256L << 20, DepotScan.splitBytes(gib, 128L << 20, 2, true), "at most 2 partitions per core");
        assertEquals(128L << 20, DepotScan.splitBytes(gib, 128L << 20, 2, false), "a size given: Spark's rule");
        assertEquals(50, DepotScan.splitBytes(100, 128L << 20, 2, true), "small: one partition per core, as Spark");
        assertEquals(List.of(4, 4, 4, 3, 1), DepotScan.pack(parts, 64, DepotScan.splitBytes(gib, 128L << 20, 2,
            true)).stream().map(List::size).toList(), "a 1 GiB scan on 2 cores: 4 partitions (and host b's own)");
        sample(10_000, 4).write().format("depot").mode("overwrite").save("packed");
        Dataset<Row> df = spark.read().format("depot").load("packed");
        assertEquals(2, df.rdd().getNumPartitions(), "small parts: as many partitions as cores (local[2])");
        assertEquals(4, spark.read().format("depot").option("maxPartitionBytes", "1").load("packed").rdd()
            .getNumPartitions());
        assertEquals(49_995_000L, df.selectExpr("sum(id)").first().getLong(0));
    }

    @Test
    void shouldReadOnlyTheColumnsAsked() {
        sample(300, 3).write().format("depot").mode("overwrite").save("pruned");
        Dataset<Row> df = spark.read().format("depot").load("pruned").select("x");
        assertTrue(df.queryExecution().executedPlan().toString().contains("depot:pruned"));
        assertEquals(22_425.0, df.selectExpr("sum(x)").first().getDouble(0));
    }

    @Test
    void shouldSayWhichDatasetIsMissing() {
        var e = assertThrows(Exception.class, () -> spark.read().format("depot").load("no-such-dataset"));
        assertTrue(e.getMessage().contains("no Depot dataset named 'no-such-dataset'"), e.getMessage());
    }

    @Test
    void shouldReleasePinsOfATaskThatFails() {
        sample(2000, 2).write().format("depot").mode("overwrite").save("failing");
        Dataset<Row> df = spark.read().format("depot").load("failing");
        assertThrows(SparkException.class, () -> df.javaRDD().map(row -> {
            if (row.getLong(0) == 1500) {
                throw new IllegalStateException("task fails mid-read");
            }
            return row;
        }).count());
        assertNoPins();
    }

    @Test
    void shouldShareDatasetsWithAnotherSparkApplicationOnTheNode() throws Exception {
        sample(5000, 3).write().format("depot").mode("overwrite").save("shared-across-apps");
        try (ChildJvm other = ChildJvm.startWith(childOptions(), SparkReadMain.class, shared.dir().toString(),
            "shared-across-apps", "written-elsewhere", "999")) {
            assertEquals("read 5000 12497500", other.awaitLine("read ", 300), "the other application read ours");
            other.awaitLine("wrote ", 120);
            assertEquals(0, other.waitFor(60));
        }
        Row r = spark.read().format("depot").load("written-elsewhere").selectExpr("count(*)", "sum(x)").first();
        assertEquals(999L, r.getLong(0), "and we read what it wrote after it exited");
        assertEquals(249_250.5, r.getDouble(1));
    }

    static List<String> childOptions() {
        List<String> options = new ArrayList<>(SparkJavaOptions.list());
        options.add("-Xmx512m");
        return options;
    }
}
