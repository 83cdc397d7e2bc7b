package dev.depot.arrow;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/** Batches of a small schema (id: int64, x: float64, name: utf8 with nulls) whose values follow from the row. */
public final class ArrowTestData {
    public static final Schema SCHEMA = new Schema(List.of(
        new Field("id", FieldType.notNullable(new ArrowType.Int(64, true)), null),
        new Field("x", FieldType.nullable(new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE)), null),
        new Field("name", FieldType.nullable(ArrowType.Utf8.INSTANCE), null)));

    private ArrowTestData() {
    }

    /** A batch of {@code rows} rows starting at row {@code first}: id = row, x = row / 2, name = "n" + row or null. */
    public static VectorSchemaRoot batch(BufferAllocator allocator, long first, int rows) {
        VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, allocator);
        BigIntVector id = (BigIntVector) root.getVector("id");
        Float8Vector x = (Float8Vector) root.getVector("x");
        VarCharVector name = (VarCharVector) root.getVector("name");
        root.allocateNew();
        for (int i = 0; i < rows; i++) {
            long row = first + i;
            id.set(i, row);
            x.set(i, row / 2.0);
            if (row % 3 == 0) {
                name.setNull(i);
            } else {
                name.setSafe(i, ("n" + row).getBytes(StandardCharsets.UTF_8));
            }
        }
        root.setRowCount(rows);
        return root;
    }

    /** Asserts (throwing AssertionError) that {@code root} holds the rows of {@link #batch}; returns the id sum. */
    public static long check(VectorSchemaRoot root, long first, int rows) {
        if (root.getRowCount() != rows) {
            throw new AssertionError("expected " + rows + " rows, found " + root.getRowCount());
        }
        BigIntVector id = (BigIntVector) root.getVector("id");
        Float8Vector x = (Float8Vector) root.getVector("x");
        VarCharVector name = (VarCharVector) root.getVector("name");
        long sum = 0;
        for (int i = 0; i < rows; i++) {
            long row = first + i;
            String n = name.isNull(i) ? null : new String(name.get(i), StandardCharsets.UTF_8);
            String expected = row % 3 == 0 ? null : "n" + row;
            if (id.get(i) != row || x.get(i) != row / 2.0 || !java.util.Objects.equals(n, expected)) {
                throw new AssertionError("row " + i + ": " + id.get(i) + ", " + x.get(i) + ", " + n);
            }
            sum += row;
        }
        return sum;
    }
}
