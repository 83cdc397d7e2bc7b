package dev.depot.spark;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import java.util.List;
import java.util.function.IntFunction;
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
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.sql.vectorized.ColumnarMap;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * A fixed-width column of an Arrow batch (boolean, byte, short, int, long, float, double, date, timestamp) read
 * straight from the Depot object's shared memory, as Spark's own {@code OffHeapColumnVector} reads its memory:
 * {@code getLong(i)} is a check of {@code i} against the row count and one load through Spark's {@code Platform}
 * at {@code address + i * 8}.
 *
 * <p>Why not {@link MemorySegment#get} per value (what this class did first): inside Spark's generated loops each
 * segment access inlines about 30 methods (VarHandle guards, the segment's bounds, alignment and liveness checks),
 * so a loop over 8 columns gave C2 twice the code to compile (measured with JFR's compilation events: 0.53 s
 * against 0.29 s of compiler time for the aggregation loop of the benchmark's query) and the {@code noop} sink's
 * per-row loop 2.4 times the inlined bytes; on a 2-core machine the reading application's JIT competes with its
 * tasks. The checks the segment made per value are made once instead, when the vector is built: its values (and
 * validity bitmap) lie inside the object's segment, which is pinned and mapped for as long as the batch is open.
 *
 * <p>What is still checked per value: the row, against the column's row count for the getter's width (a getter
 * of another width, say {@code getLong} on an {@code int} column, has a count of 0), so no read leaves the
 * column; and that the vector is open: {@link #close} (which Spark calls through {@code closeIfFreeable} when it
 * is done with a batch, and the reader calls before it releases the batch) sets every count to 0, so a read
 * through a stale vector fails with a clear exception instead of reading memory that may hold another object.
 * The vector owns nothing: the batch's Arrow root and the reader hold the pin.
 */
final class DepotColumnVector extends ColumnVector {
    /** The native byte order is Arrow's (little-endian): {@link #over} falls back to Arrow's vector otherwise. */
    private static final boolean LITTLE_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;

    /** The values' slice of the object: {@code rows * width} bytes (bits for booleans); kept for tests. */
    private final MemorySegment values;
    /** The address of the first value's first byte. */
    private final long valuesAddress;
    /** The address of the validity bitmap (bit {@code i} set: row {@code i} is not null), or 0 when no row is null. */
    private final long validityAddress;
    /** Bytes per value (1, 2, 4, 8), or -1 for bit-packed booleans. */
    private final int width;
    private final int rowCount;
    private final int nullCount;
    /* Rows readable by the getters of each width: rowCount for the column's own width, 0 for the others, and 0 for
       all once closed. One compare per value, against a field the loop does not write. */
    private int openRows;
    private int bitRows;
    private int byteRows;
    private int shortRows;
    private int intRows;
    private int longRows;
    private boolean closed;

    private DepotColumnVector(DataType type, MemorySegment values, MemorySegment validity, int width, int rows,
                              int nullCount) {
        super(type);
        this.values = values;
        this.valuesAddress = values.address();
        this.validityAddress = validity == null ? 0 : validity.address();
        this.width = width;
        this.rowCount = rows;
        this.nullCount = nullCount;
        open(rows);
    }

    private void open(int rows) {
        openRows = rows;
        bitRows = width == -1 ? rows : 0;
        byteRows = width == 1 ? rows : 0;
        shortRows = width == 2 ? rows : 0;
        intRows = width == 4 ? rows : 0;
        longRows = width == 8 ? rows : 0;
    }

    /**
     * A vector over {@code v}'s buffers inside {@code object}, or null when {@code v} is not a fixed-width type
     * this class reads, its buffers do not lie in {@code object}, or this platform is not little-endian (the caller
     * then falls back to Spark's {@code ArrowColumnVector}).
     */
    static DepotColumnVector over(FieldVector v, MemorySegment object) {
        int width = widthOf(v);
        if (width == 0 || !LITTLE_ENDIAN) {
            return null;
        }
        if (!object.scope().isAlive()) {
            throw new IllegalStateException("the segment of a batch's object is closed: open the object again");
        }
        int rows = v.getValueCount();
        int nulls = v.getNullCount();
        long valueBytes = width < 0 ? (rows + 7L) / 8 : (long) rows * width;
        MemorySegment values = sliceOf(v.getDataBuffer(), valueBytes, object);
        MemorySegment validity = nulls == 0 ? null : sliceOf(v.getValidityBuffer(), (rows + 7L) / 8, object);
        if (values == null || (nulls != 0 && validity == null)) {
            return null;
        }
        return new DepotColumnVector(ArrowUtils.fromArrowField(v.getField()), values, validity, width, rows, nulls);
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
    private static int widthOf(FieldVector v) {
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

    /**
     * The first {@code bytes} of {@code buf} as a slice of {@code object}, or null when they lie outside it (an
     * empty column's buffer may have no address: its slice is empty and never read).
     */
    private static MemorySegment sliceOf(ArrowBuf buf, long bytes, MemorySegment object) {
        if (bytes == 0) {
            return object.asSlice(0, 0);
        }
        long offset = buf.memoryAddress() - object.address();
        if (bytes > buf.capacity() || offset < 0 || offset > object.byteSize() - bytes) {
            return null;
        }
        return object.asSlice(offset, bytes);
    }

    /**
     * Closes the {@code DepotColumnVector}s of {@code batch} (the others belong to its Arrow root, which the caller
     * closes next): readers call it before they release a batch.
     */
    static void closeColumnsOf(ColumnarBatch batch) {
        for (int i = 0; i < batch.numCols(); i++) {
            if (batch.column(i) instanceof DepotColumnVector v) {
                v.close();
            }
        }
    }

    /** The values' slice of the object (for tests). */
    MemorySegment values() {
        return values;
    }

    /** Makes every later read fail (see the class comment); the memory is the reader's to release. Idempotent. */
    @Override
    public void close() {
        closed = true;
        open(0);
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
        if (Integer.compareUnsigned(rowId, openRows) >= 0) {
            throw refused(rowId, width, "isNullAt");
        }
        return validityAddress != 0
            && (Platform.getByte(null, validityAddress + (rowId >>> 3)) & (1 << (rowId & 7))) == 0;
    }

    @Override
    public boolean getBoolean(int rowId) {
        if (Integer.compareUnsigned(rowId, bitRows) >= 0) {
            throw refused(rowId, -1, "getBoolean");
        }
        return (Platform.getByte(null, valuesAddress + (rowId >>> 3)) & (1 << (rowId & 7))) != 0;
    }

    @Override
    public byte getByte(int rowId) {
        if (Integer.compareUnsigned(rowId, byteRows) >= 0) {
            throw refused(rowId, 1, "getByte");
        }
        return Platform.getByte(null, valuesAddress + rowId);
    }

    @Override
    public short getShort(int rowId) {
        if (Integer.compareUnsigned(rowId, shortRows) >= 0) {
            throw refused(rowId, 2, "getShort");
        }
        return Platform.getShort(null, valuesAddress + ((long) rowId << 1));
    }

    @Override
    public int getInt(int rowId) {
        if (Integer.compareUnsigned(rowId, intRows) >= 0) {
            throw refused(rowId, 4, "getInt");
        }
        return Platform.getInt(null, valuesAddress + ((long) rowId << 2));
    }

    @Override
    public long getLong(int rowId) {
        if (Integer.compareUnsigned(rowId, longRows) >= 0) {
            throw refused(rowId, 8, "getLong");
        }
        return Platform.getLong(null, valuesAddress + ((long) rowId << 3));
    }

    @Override
    public float getFloat(int rowId) {
        if (Integer.compareUnsigned(rowId, intRows) >= 0) {
            throw refused(rowId, 4, "getFloat");
        }
        return Platform.getFloat(null, valuesAddress + ((long) rowId << 2));
    }

    @Override
    public double getDouble(int rowId) {
        if (Integer.compareUnsigned(rowId, longRows) >= 0) {
            throw refused(rowId, 8, "getDouble");
        }
        return Platform.getDouble(null, valuesAddress + ((long) rowId << 3));
    }

    /* Bulk getters (Spark's defaults call the single getter per value): one check, then one copy. */

    @Override
    public boolean[] getBooleans(int rowId, int count) {
        checkRows(rowId, count, bitRows, -1, "getBooleans");
        boolean[] out = new boolean[count];
        for (int i = 0; i < count; i++) {
            int row = rowId + i;
            out[i] = (Platform.getByte(null, valuesAddress + (row >>> 3)) & (1 << (row & 7))) != 0;
        }
        return out;
    }

    @Override
    public byte[] getBytes(int rowId, int count) {
        return copyRows(rowId, count, byteRows, 1, "getBytes", byte[]::new, Platform.BYTE_ARRAY_OFFSET);
    }

    @Override
    public short[] getShorts(int rowId, int count) {
        return copyRows(rowId, count, shortRows, 2, "getShorts", short[]::new, Platform.SHORT_ARRAY_OFFSET);
    }

    @Override
    public int[] getInts(int rowId, int count) {
        return copyRows(rowId, count, intRows, 4, "getInts", int[]::new, Platform.INT_ARRAY_OFFSET);
    }

    @Override
    public long[] getLongs(int rowId, int count) {
        return copyRows(rowId, count, longRows, 8, "getLongs", long[]::new, Platform.LONG_ARRAY_OFFSET);
    }

    @Override
    public float[] getFloats(int rowId, int count) {
        return copyRows(rowId, count, intRows, 4, "getFloats", float[]::new, Platform.FLOAT_ARRAY_OFFSET);
    }

    @Override
    public double[] getDoubles(int rowId, int count) {
        return copyRows(rowId, count, longRows, 8, "getDoubles", double[]::new, Platform.DOUBLE_ARRAY_OFFSET);
    }

    /**
     * {@code count} values of {@code width} bytes from row {@code rowId}, checked against {@code rows} (the rows a
     * getter of that width may read), copied into a new array made by {@code allocate} (after the check: a
     * negative count is refused with the column named, not a {@code NegativeArraySizeException}) whose first
     * element is at {@code arrayOffset}.
     */
    private <T> T copyRows(int rowId, int count, int rows, int width, String method, IntFunction<T> allocate,
                           long arrayOffset) {
        checkRows(rowId, count, rows, width, method);
        T out = allocate.apply(count);
        int shift = Integer.numberOfTrailingZeros(width);
        Platform.copyMemory(null, valuesAddress + ((long) rowId << shift), out, arrayOffset, (long) count << shift);
        return out;
    }

    private void checkRows(int rowId, int count, int rows, int getterWidth, String method) {
        if (rowId < 0 || count < 0 || (long) rowId + count > rows) {
            throw refused(rowId, getterWidth, method + " of " + count + " rows from");
        }
    }

    /** Why a read was refused: a closed vector, a getter of another width, or a row outside the column. */
    private RuntimeException refused(int rowId, int getterWidth, String method) {
        String column = "a " + dataType().simpleString() + " column of " + rowCount + " rows";
        if (closed) {
            return new IllegalStateException(method + " on a closed vector (" + column + "): Spark's batches are "
                + "valid until the reader's next batch");
        }
        if (getterWidth != width) {
            return new UnsupportedOperationException(method + " on " + column);
        }
        return new IndexOutOfBoundsException(method + " row " + rowId + ": outside " + column);
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
