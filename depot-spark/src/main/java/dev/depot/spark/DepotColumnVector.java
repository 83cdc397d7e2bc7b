package dev.depot.spark;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TimeStampMicroTZVector;
import org.apache.arrow.vector.TimeStampMicroVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.util.ArrowUtils;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarArray;
import org.apache.spark.sql.vectorized.ColumnarMap;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * A fixed-width column of an Arrow batch (boolean, byte, short, int, long, float, double, date, timestamp) read
 * straight from the Depot object's {@link MemorySegment}: {@code getLong(i)} is one bounds-checked load at
 * {@code i * 8} (Spark's {@code OffHeapColumnVector} does the same load without the check). Spark's
 * {@code ArrowColumnVector} reaches the same bytes through an accessor, the Arrow vector and its {@code ArrowBuf}
 * (bounds and validity checks unless Arrow's unsafe settings are on); in the generated loop of a query that also
 * computes (Spark 4's ANSI {@code sum}), that deeper call chain is what the JIT had to inline per value.
 *
 * <p>Every access is checked against the column's slice of the object, so a corrupt batch cannot make Spark read
 * outside it. The vector is valid as long as the batch it came from (Spark's contract for {@code ColumnarBatch}:
 * until the reader's next {@code next()}); it owns nothing, and {@link #close} does nothing.
 */
final class DepotColumnVector extends ColumnVector {
    private static final ValueLayout.OfByte BYTE = ValueLayout.JAVA_BYTE;
    private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED;
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED;
    private static final ValueLayout.OfDouble DOUBLE = ValueLayout.JAVA_DOUBLE_UNALIGNED;

    /** The values: {@code rows * width} bytes (bits for booleans). */
    private final MemorySegment values;
    /** The validity bitmap (bit {@code i} set: row {@code i} is not null), or null when no row is null. */
    private final MemorySegment validity;
    private final int nullCount;

    private DepotColumnVector(DataType type, MemorySegment values, MemorySegment validity, int nullCount) {
        super(type);
        this.values = values;
        this.validity = validity;
        this.nullCount = nullCount;
    }

    /**
     * A vector over {@code v}'s buffers inside {@code object}, or null when {@code v} is not a fixed-width type
     * this class reads or its buffers do not lie in {@code object} (the caller then falls back to Spark's
     * {@code ArrowColumnVector}).
     */
    static DepotColumnVector over(FieldVector v, MemorySegment object) {
        long width = widthOf(v);
        if (width == 0) {
            return null;
        }
        int rows = v.getValueCount();
        int nulls = v.getNullCount();
        long valueBytes = width < 0 ? (rows + 7L) / 8 : rows * width;
        MemorySegment values = rows == 0 ? MemorySegment.NULL : sliceOf(v.getDataBuffer(), valueBytes, object);
        MemorySegment validity = nulls == 0 ? null : sliceOf(v.getValidityBuffer(), (rows + 7L) / 8, object);
        if (values == null || (nulls != 0 && validity == null)) {
            return null;
        }
        return new DepotColumnVector(ArrowUtils.fromArrowField(v.getField()), values, validity, nulls);
    }

    /**
     * Spark's vectors for {@code columns} of {@code root}, a batch over {@code object}: a {@code DepotColumnVector}
     * for each fixed-width column, Spark's {@code ArrowColumnVector} for the others (strings, decimals, nested).
     *
     * @param what names the batch's source in the message when a column is missing
     */
    static ColumnVector[] columnsOf(VectorSchemaRoot root, List<String> columns, MemorySegment object, String what) {
        ColumnVector[] vectors = new ColumnVector[columns.size()];
        for (int i = 0; i < vectors.length; i++) {
            FieldVector v = root.getVector(columns.get(i));
            if (v == null) {
                throw new IllegalStateException(what + " has no column '" + columns.get(i) + "'");
            }
            DepotColumnVector direct = over(v, object);
            vectors[i] = direct != null ? direct : new ArrowColumnVector(v);
        }
        return vectors;
    }

    /** Bytes per value; -1 for bit-packed booleans; 0 for types this class does not read. */
    private static long widthOf(FieldVector v) {
        if (v instanceof BitVector) {
            return -1;
        }
        if (v instanceof TinyIntVector) {
            return 1;
        }
        if (v instanceof SmallIntVector) {
            return 2;
        }
        if (v instanceof IntVector || v instanceof DateDayVector || v instanceof Float4Vector) {
            return 4;
        }
        if (v instanceof BigIntVector || v instanceof Float8Vector || v instanceof TimeStampMicroVector
            || v instanceof TimeStampMicroTZVector) {
            return 8;
        }
        return 0;
    }

    /** The first {@code bytes} of {@code buf} as a slice of {@code object}, or null when they lie outside it. */
    private static MemorySegment sliceOf(ArrowBuf buf, long bytes, MemorySegment object) {
        long offset = buf.memoryAddress() - object.address();
        if (bytes > buf.capacity() || offset < 0 || offset > object.byteSize() - bytes) {
            return null;
        }
        return object.asSlice(offset, bytes);
    }

    /** The values' slice of the object (for tests). */
    MemorySegment values() {
        return values;
    }

    @Override
    public void close() {
        // owns nothing: the batch's Arrow root and the reader hold the pin
    }

    @Override
    public boolean hasNull() {
        return nullCount > 0;
    }

    @Override
    public int numNulls() {
        return nullCount;
    }

    @Override
    public boolean isNullAt(int rowId) {
        return validity != null && (validity.get(BYTE, rowId >>> 3) & (1 << (rowId & 7))) == 0;
    }

    @Override
    public boolean getBoolean(int rowId) {
        return (values.get(BYTE, rowId >>> 3) & (1 << (rowId & 7))) != 0;
    }

    @Override
    public byte getByte(int rowId) {
        return values.get(BYTE, rowId);
    }

    @Override
    public short getShort(int rowId) {
        return values.get(SHORT, (long) rowId << 1);
    }

    @Override
    public int getInt(int rowId) {
        return values.get(INT, (long) rowId << 2);
    }

    @Override
    public long getLong(int rowId) {
        return values.get(LONG, (long) rowId << 3);
    }

    @Override
    public float getFloat(int rowId) {
        return values.get(FLOAT, (long) rowId << 2);
    }

    @Override
    public double getDouble(int rowId) {
        return values.get(DOUBLE, (long) rowId << 3);
    }

    @Override
    public ColumnarArray getArray(int rowId) {
        throw unsupported("getArray");
    }

    @Override
    public ColumnarMap getMap(int rowId) {
        throw unsupported("getMap");
    }

    @Override
    public Decimal getDecimal(int rowId, int precision, int scale) {
        throw unsupported("getDecimal");
    }

    @Override
    public UTF8String getUTF8String(int rowId) {
        throw unsupported("getUTF8String");
    }

    @Override
    public byte[] getBinary(int rowId) {
        throw unsupported("getBinary");
    }

    @Override
    public ColumnVector getChild(int ordinal) {
        throw unsupported("getChild");
    }

    private UnsupportedOperationException unsupported(String method) {
        return new UnsupportedOperationException(method + " on a " + dataType().simpleString() + " column");
    }
}
