package dev.depot.client;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The metadata convention for n-dimensional arrays, shared with the Python client's {@code put_array} and
 * {@code get_array} ({@code docs/PROTOCOL.md}, "Array metadata"). The object's data holds the elements in C
 * order; its metadata starts with this header (little-endian), and any bytes after it belong to the application:
 *
 * <pre>
 *  0      4 bytes   magic "DPA1"
 *  4      u8        n: length of the dtype string, 1..{@value #MAX_DTYPE_LENGTH}
 *  5      n bytes   dtype, ASCII, NumPy's array-interface type string: "&lt;f8", "&lt;i4", "|u1", "|b1", ...
 *  5+n    u8        ndim, 0..{@value #MAX_NDIM}
 *  6+n    ndim x u64 the shape, outermost dimension first
 * </pre>
 *
 * Immutable.
 */
public final class ArrayMetadata {
    public static final byte[] MAGIC = {'D', 'P', 'A', '1'};
    public static final int MAGIC_OFFSET = 0;
    public static final int DTYPE_LENGTH_OFFSET = MAGIC_OFFSET + MAGIC.length;
    public static final int DTYPE_OFFSET = DTYPE_LENGTH_OFFSET + 1;
    public static final int MAX_DTYPE_LENGTH = 32;
    public static final int MAX_NDIM = 32;

    public static final String FLOAT64 = "<f8";
    public static final String FLOAT32 = "<f4";
    public static final String INT64 = "<i8";
    public static final String INT32 = "<i4";
    public static final String UINT8 = "|u1";

    private final String dtype;
    private final long[] shape;
    private final int headerLength;

    private ArrayMetadata(String dtype, long[] shape) {
        this.dtype = dtype;
        this.shape = shape;
        this.headerLength = DTYPE_OFFSET + dtype.length() + 1 + Long.BYTES * shape.length;
    }

    /** An array of {@code dtype} (a NumPy type string such as {@code "<f8"}) and {@code shape}. */
    public static ArrayMetadata of(String dtype, long... shape) {
        checkDtype(dtype);
        if (shape.length > MAX_NDIM) {
            throw new IllegalArgumentException("an array has at most " + MAX_NDIM + " dimensions, got " + shape.length);
        }
        for (int i = 0; i < shape.length; i++) {
            if (shape[i] < 0) {
                throw new IllegalArgumentException("dimension " + i + " of the shape is negative: " + shape[i]);
            }
        }
        ArrayMetadata m = new ArrayMetadata(dtype, shape.clone());
        m.byteSize();
        return m;
    }

    private static void checkDtype(String dtype) {
        if (dtype.isEmpty() || dtype.length() > MAX_DTYPE_LENGTH || !StandardCharsets.US_ASCII.newEncoder().canEncode(dtype)) {
            throw new IllegalArgumentException("a dtype is 1.." + MAX_DTYPE_LENGTH + " ASCII characters, got '" + dtype + "'");
        }
        char order = dtype.charAt(0);
        if (order != '<' && order != '>' && order != '|' && order != '=') {
            throw new IllegalArgumentException("dtype '" + dtype + "' must start with a byte order: < > | or =");
        }
        parseItemSize(dtype);
    }

    private static int parseItemSize(String dtype) {
        try {
            int size = Integer.parseInt(dtype.substring(2));
            if (size <= 0 || dtype.length() < 3) {
                throw new NumberFormatException();
            }
            return size;
        } catch (NumberFormatException | IndexOutOfBoundsException e) {
            throw new IllegalArgumentException("dtype '" + dtype + "' is not <order><kind><item size>, e.g. '<f8'");
        }
    }

    /** True when {@code metadata} starts with the array magic. */
    public static boolean isArray(byte[] metadata) {
        return metadata.length >= MAGIC.length && Arrays.equals(metadata, 0, MAGIC.length, MAGIC, 0, MAGIC.length);
    }

    /**
     * Reads the header from an object's metadata. Every length is checked against the metadata's length.
     *
     * @throws IllegalArgumentException when the metadata is not an array header or is truncated
     */
    public static ArrayMetadata decode(byte[] metadata) {
        if (!isArray(metadata)) {
            throw new IllegalArgumentException("metadata of " + metadata.length + " bytes does not start with the array magic DPA1");
        }
        ByteBuffer b = ByteBuffer.wrap(metadata).order(ByteOrder.LITTLE_ENDIAN);
        int n = Byte.toUnsignedInt(need(b, DTYPE_LENGTH_OFFSET, 1).get(DTYPE_LENGTH_OFFSET));
        need(b, DTYPE_OFFSET, n + 1);
        String dtype = new String(metadata, DTYPE_OFFSET, n, StandardCharsets.US_ASCII);
        int ndimOffset = DTYPE_OFFSET + n;
        int ndim = Byte.toUnsignedInt(b.get(ndimOffset));
        if (ndim > MAX_NDIM) {
            throw new IllegalArgumentException("array header has " + ndim + " dimensions; at most " + MAX_NDIM);
        }
        int shapeOffset = ndimOffset + 1;
        need(b, shapeOffset, Long.BYTES * ndim);
        long[] shape = new long[ndim];
        for (int i = 0; i < ndim; i++) {
            shape[i] = b.getLong(shapeOffset + Long.BYTES * i);
        }
        return of(dtype, shape);
    }

    private static ByteBuffer need(ByteBuffer b, int offset, int length) {
        if ((long) offset + length > b.capacity()) {
            throw new IllegalArgumentException("array header is truncated: needs " + length + " bytes at offset "
                + offset + " but the metadata has " + b.capacity());
        }
        return b;
    }

    /** The header bytes (followed by {@code extra}, the application's own metadata). */
    public byte[] encode(byte[] extra) {
        ByteBuffer b = ByteBuffer.allocate(headerLength + extra.length).order(ByteOrder.LITTLE_ENDIAN);
        b.put(MAGIC).put((byte) dtype.length()).put(dtype.getBytes(StandardCharsets.US_ASCII)).put((byte) shape.length);
        for (long d : shape) {
            b.putLong(d);
        }
        b.put(extra);
        return b.array();
    }

    public byte[] encode() {
        return encode(new byte[0]);
    }

    /** Length of the header in an object's metadata; the application's bytes follow. */
    public int headerLength() {
        return headerLength;
    }

    public String dtype() {
        return dtype;
    }

    public long[] shape() {
        return shape.clone();
    }

    /** Bytes per element, from the dtype ({@code "<f8"}: 8). */
    public int itemSize() {
        return parseItemSize(dtype);
    }

    /** Byte order of the elements; single-byte ({@code '|'}) and native ({@code '='}) types read as native. */
    public ByteOrder byteOrder() {
        return dtype.charAt(0) == '<' ? ByteOrder.LITTLE_ENDIAN
            : dtype.charAt(0) == '>' ? ByteOrder.BIG_ENDIAN : ByteOrder.nativeOrder();
    }

    /** Number of elements: the product of the shape (1 for a 0-d array). */
    public long elementCount() {
        long n = 1;
        for (long d : shape) {
            n = Math.multiplyExact(n, d);
        }
        return n;
    }

    /** Bytes of data the array needs. */
    public long byteSize() {
        try {
            return Math.multiplyExact(elementCount(), itemSize());
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("array of shape " + Arrays.toString(shape) + " and dtype " + dtype
                + " has more than 2^63 bytes");
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ArrayMetadata m && dtype.equals(m.dtype) && Arrays.equals(shape, m.shape);
    }

    @Override
    public int hashCode() {
        return dtype.hashCode() * 31 + Arrays.hashCode(shape);
    }

    @Override
    public String toString() {
        return "array " + dtype + " " + Arrays.toString(shape);
    }
}
