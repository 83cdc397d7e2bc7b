package dev.depot.arrow;

import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * The Arrow IPC streaming format as Depot stores it: one object holds one whole stream (a schema message, record
 * batch messages, the end-of-stream marker), uncompressed, every message 8-byte aligned and every message body
 * 64-byte aligned (object data is 64-byte aligned in the store, so offsets in the object are absolute alignment).
 * Any Arrow reader (pyarrow {@code ipc.open_stream}, Arrow Java {@code ArrowStreamReader}) reads the object as it is.
 *
 * <pre>
 * one message:
 *   0        4        8                               8 + metadataLength      + bodyLength
 *   +--------+--------+-------------------------------+------------------------+
 *   | 0xFFFF | length | flatbuffer Message, zero-padded| body (buffers at the   |
 *   | FFFF   | (int32)| so that the body is aligned    | offsets the Message    |
 *   +--------+--------+-------------------------------+ names, 8-aligned)     |
 *                                                     ^ 64-byte aligned       +
 * end of stream: 0xFFFFFFFF 0x00000000
 * </pre>
 *
 * All integers are little-endian, as the Arrow format specifies.
 */
public final class ArrowStreamDescriptor {
    /** The continuation marker that starts every message in the current (0.15+) format. */
    public static final int CONTINUATION_MARKER = 0xFFFFFFFF;
    public static final int CONTINUATION_OFFSET = 0;
    /** Length of the flatbuffer metadata that follows the prefix, padding included; 0 ends the stream. */
    public static final int METADATA_LENGTH_OFFSET = CONTINUATION_OFFSET + Integer.BYTES;
    public static final int PREFIX_LENGTH = METADATA_LENGTH_OFFSET + Integer.BYTES;
    /** The end-of-stream marker is a prefix with metadata length 0. */
    public static final int END_OF_STREAM_LENGTH = PREFIX_LENGTH;
    /** Alignment of every message (the format's minimum). */
    public static final int MESSAGE_ALIGNMENT = 8;
    /** Alignment of every message body (SIMD friendly; what Arrow recommends). */
    public static final int BODY_ALIGNMENT = 64;

    /** Object metadata of an Arrow stream: its IANA media type. */
    public static final String MEDIA_TYPE = "application/vnd.apache.arrow.stream";
    static final byte[] MEDIA_TYPE_BYTES = MEDIA_TYPE.getBytes(StandardCharsets.US_ASCII);

    static final ValueLayout.OfInt INT_LE = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private ArrowStreamDescriptor() {
    }

    /** {@code value} rounded up to a multiple of {@code alignment} (a power of two). */
    static long align(long value, long alignment) {
        return (value + alignment - 1) & -alignment;
    }

    /**
     * The metadata length to write for a message at {@code messageOffset} whose flatbuffer has {@code flatbufferLength}
     * bytes: padded so that the body that follows starts at a multiple of {@link #BODY_ALIGNMENT}.
     */
    static long paddedMetadataLength(long messageOffset, long flatbufferLength) {
        long bodyStart = align(messageOffset + PREFIX_LENGTH + flatbufferLength, BODY_ALIGNMENT);
        return bodyStart - messageOffset - PREFIX_LENGTH;
    }
}
