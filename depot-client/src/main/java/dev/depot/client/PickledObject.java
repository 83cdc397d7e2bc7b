package dev.depot.client;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Reads the layout of an object that Python's {@code put_object} wrote ({@code docs/PROTOCOL.md}, "Pickled
 * objects"): a pickle stream (protocol 5) and the out-of-band buffers it refers to, which Java can read in place
 * (a NumPy array's elements, a pyarrow buffer, a large {@code bytes} value). The object's metadata starts with
 * {@link #MAGIC}; its data, little-endian:
 *
 * <pre>
 *  0      4 bytes    magic "DPK1"
 *  4      u32        n: number of buffers, at most {@value #MAX_BUFFERS}
 *  8      u64        offset of the pickle stream (from the start of the data)
 *  16     u64        length of the pickle stream
 *  24     n x 24     the buffer table: u64 offset, u64 length, u32 kind, u32 zero
 *  ...               the pickle stream, then the buffers, each at a 64-byte aligned offset
 * </pre>
 *
 * Every offset and length is checked against the data's size when parsed. The segments are slices of the
 * data they were parsed from: valid only while its view is open. Immutable.
 */
public final class PickledObject {
    public static final byte[] MAGIC = {'D', 'P', 'K', '1'};
    public static final int MAGIC_OFFSET = 0;
    public static final int BUFFER_COUNT_OFFSET = MAGIC_OFFSET + MAGIC.length;
    public static final int STREAM_OFFSET_OFFSET = BUFFER_COUNT_OFFSET + Integer.BYTES;
    public static final int STREAM_LENGTH_OFFSET = STREAM_OFFSET_OFFSET + Long.BYTES;
    public static final int HEADER_LENGTH = STREAM_LENGTH_OFFSET + Long.BYTES;

    public static final int ENTRY_OFFSET_OFFSET = 0;
    public static final int ENTRY_LENGTH_OFFSET = ENTRY_OFFSET_OFFSET + Long.BYTES;
    public static final int ENTRY_KIND_OFFSET = ENTRY_LENGTH_OFFSET + Long.BYTES;
    public static final int ENTRY_RESERVED_OFFSET = ENTRY_KIND_OFFSET + Integer.BYTES;
    public static final int ENTRY_LENGTH = ENTRY_RESERVED_OFFSET + Integer.BYTES;

    public static final int MAX_BUFFERS = 1 << 24;
    public static final int BUFFER_ALIGNMENT = 64;

    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** What a buffer was in Python. */
    public enum Kind {
        /** A protocol-5 out-of-band buffer (NumPy, pandas, pyarrow), taken in order by the stream's NEXT_BUFFER. */
        PICKLE_BUFFER,
        /** A {@code bytes} value, named by the stream as persistent id = its table index. */
        BYTES,
        /** A {@code bytearray} value, as {@link #BYTES}. */
        BYTEARRAY,
        /** A {@code memoryview} value, as {@link #BYTES}. */
        MEMORYVIEW
    }

    private final MemorySegment stream;
    private final List<MemorySegment> buffers;
    private final List<Kind> kinds;

    private PickledObject(MemorySegment stream, List<MemorySegment> buffers, List<Kind> kinds) {
        this.stream = stream;
        this.buffers = buffers;
        this.kinds = kinds;
    }

    /** True when {@code metadata} marks an object written by {@code put_object}. */
    public static boolean isPickled(byte[] metadata) {
        return metadata.length >= MAGIC.length && Arrays.equals(metadata, 0, MAGIC.length, MAGIC, 0, MAGIC.length);
    }

    /**
     * The layout of the object in {@code view}.
     *
     * @throws IllegalArgumentException when the object was not written by {@code put_object} or its layout is damaged
     */
    public static PickledObject of(ObjectView view) {
        if (!isPickled(view.metadata())) {
            throw new IllegalArgumentException("object " + view.id() + " was not written by put_object: its metadata"
                + " does not start with DPK1");
        }
        return parse(view.data());
    }

    /**
     * Parses the layout from an object's data.
     *
     * @throws IllegalArgumentException when a field lies outside the data or the magic or a kind is wrong
     */
    public static PickledObject parse(MemorySegment data) {
        long size = data.byteSize();
        if (size < HEADER_LENGTH) {
            throw new IllegalArgumentException("pickled object has " + size + " bytes, fewer than its " + HEADER_LENGTH
                + "-byte header");
        }
        for (int i = 0; i < MAGIC.length; i++) {
            if (data.get(ValueLayout.JAVA_BYTE, MAGIC_OFFSET + i) != MAGIC[i]) {
                throw new IllegalArgumentException("pickled object's data does not start with the magic DPK1");
            }
        }
        long count = Integer.toUnsignedLong(data.get(U32, BUFFER_COUNT_OFFSET));
        long tableEnd = HEADER_LENGTH + count * ENTRY_LENGTH;
        if (count > MAX_BUFFERS || tableEnd > size) {
            throw new IllegalArgumentException("pickled object says it has " + count + " buffers; their table does not"
                + " fit in its " + size + " bytes (at most " + MAX_BUFFERS + " buffers)");
        }
        MemorySegment stream = slice(data, "the pickle stream", data.get(U64, STREAM_OFFSET_OFFSET),
            data.get(U64, STREAM_LENGTH_OFFSET), tableEnd);
        List<MemorySegment> buffers = new ArrayList<>((int) count);
        List<Kind> kinds = new ArrayList<>((int) count);
        Kind[] known = Kind.values();
        for (int i = 0; i < count; i++) {
            long entry = HEADER_LENGTH + (long) i * ENTRY_LENGTH;
            buffers.add(slice(data, "buffer " + i, data.get(U64, entry + ENTRY_OFFSET_OFFSET),
                data.get(U64, entry + ENTRY_LENGTH_OFFSET), tableEnd));
            int kind = data.get(U32, entry + ENTRY_KIND_OFFSET);
            if (kind < 0 || kind >= known.length) {
                throw new IllegalArgumentException("pickled object's buffer " + i + " has kind "
                    + Integer.toUnsignedLong(kind) + "; known kinds are 0.." + (known.length - 1));
            }
            kinds.add(known[kind]);
        }
        return new PickledObject(stream, List.copyOf(buffers), List.copyOf(kinds));
    }

    private static MemorySegment slice(MemorySegment data, String what, long offset, long length, long from) {
        long size = data.byteSize();
        if (offset < from || length < 0 || length > size || offset > size - length) {
            throw new IllegalArgumentException("pickled object's " + what + " at " + offset + " (+" + length
                + " bytes) lies outside its data " + from + ".." + size);
        }
        return data.asSlice(offset, length);
    }

    /** The pickle stream (protocol 5); Java cannot unpickle it, but may copy it whole to a Python process. */
    public MemorySegment stream() {
        return stream;
    }

    public int bufferCount() {
        return buffers.size();
    }

    /** Buffer {@code i}'s bytes, in place. */
    public MemorySegment buffer(int i) {
        return buffers.get(i);
    }

    public Kind kind(int i) {
        return kinds.get(i);
    }

    /** Every buffer, in table order. */
    public List<MemorySegment> buffers() {
        return buffers;
    }
}
