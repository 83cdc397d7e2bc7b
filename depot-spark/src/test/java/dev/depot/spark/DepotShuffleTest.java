package dev.depot.spark;

import static org.junit.jupiter.api.Assertions.*;

import dev.depot.client.DepotClient;
import dev.depot.shuffle.Shuffle;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;

class DepotShuffleTest {
    private final SharedSpark shared = SharedSpark.get();
    private final SparkSession spark = shared.spark;
    private final DepotClient depot = shared.depot;

    private Dataset<Row> sample() {
        // 5 input partitions of 1000 ids each, the last two emptied by the filter: maps with nothing to write
        return spark.range(0, 5000, 1, 5).filter("id < 3000")
            .selectExpr("id", "id % 17 AS k", "CAST(id AS STRING) AS s", "IF(id % 5 = 0, NULL, id * 0.5D) AS x");
    }

    @Test
    void shouldRepartitionByKeyThroughDepotShuffleObjects() {
        long before = depot.list().size();
        try (DepotShuffle.Repartitioned byKey = DepotShuffle.repartition(sample(), 3, "k")) {
            Dataset<Row> out = byKey.dataset();
            assertEquals(3, out.rdd().getNumPartitions());
            assertEquals(sample().schema(), out.schema());
            assertEquals(0, out.except(sample()).count(), "the same rows");
            assertEquals(3000, out.count());
            Row sums = out.selectExpr("sum(id)", "count(x)", "sum(x)", "max(length(s))").first();
            assertEquals(4_498_500L, sums.getLong(0));
            assertEquals(2400L, sums.getLong(1));
            List<Row> partitionsPerKey = out.selectExpr("k", "spark_partition_id() AS p").distinct()
                .groupBy("k").count().filter("count > 1").collectAsList();
            assertEquals(List.of(), partitionsPerKey, "each key lies in one partition");
            assertEquals(17, out.select("k").distinct().count());
            assertTrue(depot.list().size() > before, "the shuffle's objects are in the store");
            assertEquals(3, out.selectExpr("k").groupBy(org.apache.spark.sql.functions.spark_partition_id()).count()
                .count(), "every partition got keys");
            assertTrue(depot.list().stream().allMatch(i -> i.pinCount() == 0), "readers released their pins");
        }
        assertEquals(before, depot.list().size(), "closing deleted the shuffle's objects");
        DepotShuffle.Repartitioned closed = DepotShuffle.repartition(sample(), 2, "k");
        closed.close();
        var e = assertThrows(Exception.class, () -> closed.dataset().count());
        assertTrue(String.valueOf(e.getMessage()).contains("is closed"), e.getMessage());
    }

    @Test
    void shouldReadTheShuffleInPlaceAsArrowBatches() throws Exception {
        try (DepotShuffle.Repartitioned byKey = DepotShuffle.repartition(sample(), 2, "k", "id")) {
            try (Shuffle s = Shuffle.open(depot, byKey.shuffleId(), 0);
                 ShufflePartitionReader reader = new ShufflePartitionReader(shared.dir().toString(),
                     byKey.shuffleId(), 1, List.of("id", "s"))) {
                assertEquals(5, s.maps(), "one map per input partition, empty ones too");
                try (var slices = s.reader(1, 0)) {
                    assertEquals(0, slices.slice(4).byteSize(), "an empty map has an empty slice");
                    assertTrue(slices.slice(0).byteSize() > 0);
                }
                long rows = 0;
                while (reader.next()) {
                    var batch = reader.get();
                    rows += batch.numRows();
                    // id (a long) is read from the slice itself, s (a string) through Arrow's vector
                    long id = assertInstanceOf(DepotColumnVector.class, batch.column(0)).values().address();
                    long str = assertInstanceOf(org.apache.spark.sql.vectorized.ArrowColumnVector.class, batch.column(1))
                        .getValueVector().getDataBuffer().memoryAddress();
                    assertTrue(id != 0 && str != 0);
                    assertTrue(isInsideTheStore(id) && isInsideTheStore(str), "the batch lies in the store's shared memory");
                }
                assertEquals(byKey.dataset().filter("spark_partition_id() = 1").count(), rows);
            }
        }
    }

    private boolean isInsideTheStore(long address) {
        try {
            for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/self/maps"))) {
                String[] f = line.split("\\s+");
                String[] range = f[0].split("-");
                long start = Long.parseUnsignedLong(range[0], 16);
                long end = Long.parseUnsignedLong(range[1], 16);
                if (address >= start && address < end) {
                    return f.length > 5 && f[5].startsWith(shared.dir().toString());
                }
            }
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return false;
    }

    @Test
    void shouldRefuseARepartitionWithoutKeys() {
        assertThrows(IllegalArgumentException.class, () -> DepotShuffle.repartition(sample(), 2));
    }
}
