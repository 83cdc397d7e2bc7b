package dev.depot.spark;

import static org.junit.jupiter.api.Assertions.*;

import dev.depot.arrow.DepotArrow;
import dev.depot.arrow.DepotArrowReader;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.BooleanType$;
import org.apache.spark.sql.types.ByteType$;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType$;
import org.apache.spark.sql.types.DoubleType$;
import org.apache.spark.sql.types.FloatType$;
import org.apache.spark.sql.types.IntegerType$;
import org.apache.spark.sql.types.ShortType$;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.junit.jupiter.api.Test;

/**
 * {@link DepotColumnVector} reads values through addresses checked once per batch: every getter, single and bulk,
 * must return what Spark's {@code ArrowColumnVector} returns over the same Arrow vectors, and refuse (clearly) what
 * would read outside the column or through a closed batch.
 */
class DepotColumnVectorTest {
    private static final int ROWS = 3001;
    private final SharedSpark shared = SharedSpark.get();

    /** One part (one Arrow batch) of every fixed-width type Spark writes, nullable and not. */
    private Catalogue.Part typedPart(String name) {
        Dataset<Row> typed = shared.spark.range(0, ROWS, 1, 1).selectExpr(
            "CAST(id % 100 - 50 AS TINYINT) AS b", "CAST(id - 1500 AS SMALLINT) AS sh", "CAST(id * 7919 AS INT) AS i",
            "id * -3037000493 AS l", "CAST(id AS FLOAT) / 4 AS f", "id / -8D AS d", "id % 3 = 0 AS z",
            "DATE_ADD(DATE'2020-01-01', CAST(id AS INT)) AS dt", "TIMESTAMP_MICROS(id * 1000003) AS ts",
            "CAST(TIMESTAMP_MICROS(id) AS TIMESTAMP_NTZ) AS ntz", "IF(id % 5 = 0, NULL, id) AS ln",
            "IF(id % 7 = 0, NULL, id % 2 = 0) AS zn", "IF(id % 11 = 0, NULL, id / 3D) AS dn",
            "IF(id % 2 = 1, NULL, CAST(id AS INT)) AS inn");
        typed.write().format("depot").mode("overwrite").save(name);
        List<Catalogue.Part> parts = Catalogue.read(shared.depot, name).parts();
        assertEquals(1, parts.size());
        return parts.getFirst();
    }

    @Test
    void shouldReadTheSameValuesAsSparksArrowVectorsForEveryFixedWidthType() {
        Catalogue.Part part = typedPart("vector-values");
        try (BufferAllocator allocator = DepotNode.allocator().newChildAllocator("test", 0, Long.MAX_VALUE);
             DepotArrowReader reader = DepotArrow.open(shared.depot, part.objectId(), allocator);
             VectorSchemaRoot root = reader.next()) {
            assertEquals(ROWS, root.getRowCount());
            for (FieldVector v : root.getFieldVectors()) {
                DepotColumnVector direct = DepotColumnVector.over(v, reader.segment());
                assertNotNull(direct, v.getName() + " is read from the segment");
                ArrowColumnVector arrow = new ArrowColumnVector(v);
                assertEquals(arrow.dataType(), direct.dataType(), v.getName());
                assertEquals(arrow.hasNull(), direct.hasNull(), v.getName());
                assertEquals(arrow.numNulls(), direct.numNulls(), v.getName());
                for (int row = 0; row < ROWS; row++) {
                    assertEquals(arrow.isNullAt(row), direct.isNullAt(row), v.getName() + " row " + row);
                    if (!arrow.isNullAt(row)) {
                        assertEquals(valueOf(arrow, row), valueOf(direct, row), v.getName() + " row " + row);
                    }
                }
                assertBulkGettersMatchSingleOnes(direct, v.getName());
            }
            assertTrue(direct(root, reader, "ln").isNullAt(0) && !direct(root, reader, "ln").isNullAt(1));
            assertEquals(601, direct(root, reader, "ln").numNulls());
        }
    }

    private static DepotColumnVector direct(VectorSchemaRoot root, DepotArrowReader reader, String column) {
        return DepotColumnVector.over(root.getVector(column), reader.segment());
    }

    /** The value of {@code row} through the getter Spark's generated code calls for the column's type. */
    private static Object valueOf(ColumnVector c, int row) {
        DataType t = c.dataType();
        if (t == BooleanType$.MODULE$) {
            return c.getBoolean(row);
        } else if (t == ByteType$.MODULE$) {
            return c.getByte(row);
        } else if (t == ShortType$.MODULE$) {
            return c.getShort(row);
        } else if (t == IntegerType$.MODULE$ || t == DateType$.MODULE$) {
            return c.getInt(row);
        } else if (t == FloatType$.MODULE$) {
            return c.getFloat(row);
        } else if (t == DoubleType$.MODULE$) {
            return c.getDouble(row);
        }
        return c.getLong(row);  // long, timestamp, timestamp_ntz
    }

    /** Bulk getters over a range that starts mid-byte and ends at the last row, against the single getters. */
    private static void assertBulkGettersMatchSingleOnes(DepotColumnVector c, String name) {
        int from = 13;
        int count = ROWS - from;
        DataType t = c.dataType();
        for (int i = 0; i < count; i++) {
            int row = from + i;
            Object bulk;
            if (t == BooleanType$.MODULE$) {
                bulk = c.getBooleans(from, count)[i];
            } else if (t == ByteType$.MODULE$) {
                bulk = c.getBytes(from, count)[i];
            } else if (t == ShortType$.MODULE$) {
                bulk = c.getShorts(from, count)[i];
            } else if (t == IntegerType$.MODULE$ || t == DateType$.MODULE$) {
                bulk = c.getInts(from, count)[i];
            } else if (t == FloatType$.MODULE$) {
                bulk = c.getFloats(from, count)[i];
            } else if (t == DoubleType$.MODULE$) {
                bulk = c.getDoubles(from, count)[i];
            } else {
                bulk = c.getLongs(from, count)[i];
            }
            assertEquals(valueOf(c, row), bulk, name + " row " + row + " in bulk");
            if (i == 40) {
                i = count - 40;  // the start and the end of the range are enough; copying it 3000 times is not
            }
        }
    }

    @Test
    void shouldRefuseRowsOutsideTheColumnAndGettersOfAnotherWidth() {
        Catalogue.Part part = typedPart("vector-bounds");
        try (BufferAllocator allocator = DepotNode.allocator().newChildAllocator("test", 0, Long.MAX_VALUE);
             DepotArrowReader reader = DepotArrow.open(shared.depot, part.objectId(), allocator);
             VectorSchemaRoot root = reader.next()) {
            DepotColumnVector l = direct(root, reader, "l");
            DepotColumnVector i = direct(root, reader, "i");
            DepotColumnVector z = direct(root, reader, "z");
            var past = assertThrows(IndexOutOfBoundsException.class, () -> l.getLong(ROWS));
            assertTrue(past.getMessage().contains("row " + ROWS) && past.getMessage().contains(ROWS + " rows"),
                past.getMessage());
            assertThrows(IndexOutOfBoundsException.class, () -> l.getLong(-1));
            assertThrows(IndexOutOfBoundsException.class, () -> l.isNullAt(ROWS));
            assertThrows(IndexOutOfBoundsException.class, () -> i.getInt(ROWS));
            assertThrows(IndexOutOfBoundsException.class, () -> z.getBoolean(ROWS));
            assertThrows(IndexOutOfBoundsException.class, () -> l.getLongs(ROWS - 1, 2));
            assertThrows(IndexOutOfBoundsException.class, () -> l.getLongs(-1, 2));
            assertThrows(IndexOutOfBoundsException.class, () -> i.getInts(0, -1));
            assertEquals(0, l.getLongs(ROWS, 0).length, "an empty range at the end is fine");
            // an int column has ROWS * 4 bytes: reading it 8 bytes a row would leave it half way through
            var wider = assertThrows(UnsupportedOperationException.class, () -> i.getLong(ROWS / 2 + 1));
            assertTrue(wider.getMessage().contains("getLong on a int column"), wider.getMessage());
            assertThrows(UnsupportedOperationException.class, () -> l.getInt(0));
            assertThrows(UnsupportedOperationException.class, () -> l.getInts(0, 1));
            assertThrows(UnsupportedOperationException.class, () -> z.getByte(0));
        }
    }

    @Test
    void shouldRefuseReadsThroughAVectorOfAClosedBatch() {
        Catalogue.Part part = typedPart("vector-closed");
        try (DepotPartitionReader reader = new DepotPartitionReader(shared.dir().toString(), List.of("l", "ln"),
            part)) {
            assertTrue(reader.next());
            ColumnarBatch batch = reader.get();
            ColumnVector l = batch.column(0);
            ColumnVector ln = batch.column(1);
            assertEquals(-3037000493L, l.getLong(1));
            assertFalse(reader.next(), "one batch: the next call closes it");
            var stale = assertThrows(IllegalStateException.class, () -> l.getLong(1));
            assertTrue(stale.getMessage().contains("closed"), stale.getMessage());
            assertThrows(IllegalStateException.class, () -> ln.isNullAt(1));
            assertThrows(IllegalStateException.class, () -> l.getLongs(0, 1));
        }
        try (DepotPartitionReader reader = new DepotPartitionReader(shared.dir().toString(), List.of("l"), part)) {
            assertTrue(reader.next());
            ColumnarBatch batch = reader.get();
            batch.closeIfFreeable();  // what Spark's generated code does when it has read every row of a batch
            assertThrows(IllegalStateException.class, () -> batch.column(0).getLong(0));
        }
    }
}
