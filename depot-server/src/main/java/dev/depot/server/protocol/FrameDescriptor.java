package dev.depot.server.protocol;

/**
 * Layout of a control-protocol frame on {@code DIR/depot.sock} ({@code docs/PROTOCOL.md}). Every integer is
 * little-endian. A frame is a 16-byte header followed by a body whose layout depends on the type
 * ({@link MessageDescriptor}):
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |              length: bytes after this field (u32)             |  0
 *  +-------------------------------+-------------------------------+
 *  |          type (u16)           |          flags (u16)          |  4
 *  +-------------------------------+-------------------------------+
 *  |                                                               |  8
 *  +                     request id (u64)                          +
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                  body (length - 12 bytes)                    ...  16
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * <p>A reply carries the request's id and type with {@link #REPLY_BIT} set, or type {@link #TYPE_ERROR}.
 * {@code length} is checked against {@link #MIN_LENGTH} and {@link #MAX_LENGTH} before anything is read.
 */
public final class FrameDescriptor {
    /** Major version: a client of another major version is refused. */
    public static final int VERSION_MAJOR = 2;
    /** Minor version: additions that older peers can ignore. */
    public static final int VERSION_MINOR = 0;

    public static final int LENGTH_OFFSET = 0;
    public static final int TYPE_OFFSET = LENGTH_OFFSET + Integer.BYTES;
    public static final int FLAGS_OFFSET = TYPE_OFFSET + Short.BYTES;
    public static final int REQUEST_ID_OFFSET = FLAGS_OFFSET + Short.BYTES;
    public static final int HEADER_LENGTH = REQUEST_ID_OFFSET + Long.BYTES;

    /** Smallest value of the length field: type, flags and request id, empty body. */
    public static final int MIN_LENGTH = HEADER_LENGTH - Integer.BYTES;
    /** Largest body: 1 MiB of ids or listing plus 64 KiB of metadata. */
    public static final int MAX_BODY_LENGTH = (1 << 20) + (64 << 10);
    /** Largest value of the length field. */
    public static final int MAX_LENGTH = MIN_LENGTH + MAX_BODY_LENGTH;

    /** Flag of a reply frame that is followed by more frames answering the same request (LIST). */
    public static final int FLAG_MORE = 1;

    public static final int TYPE_HELLO = 1;
    public static final int TYPE_CREATE = 2;
    public static final int TYPE_SEAL = 3;
    public static final int TYPE_ABORT = 4;
    public static final int TYPE_GET = 5;
    public static final int TYPE_GET_MANY = 6;
    public static final int TYPE_RELEASE = 7;
    public static final int TYPE_CONTAINS = 8;
    public static final int TYPE_DELETE = 9;
    public static final int TYPE_LIST = 10;
    public static final int TYPE_STAT = 11;
    public static final int TYPE_EVICT = 12;
    /** CREATE, the data inline, and SEAL in one request: small objects in one round trip. */
    public static final int TYPE_PUT = 13;
    /** Set in the type of a reply. */
    public static final int REPLY_BIT = 0x8000;
    /** Type of an error reply; its body is {@link MessageDescriptor#ERROR_CODE_OFFSET code + message}. */
    public static final int TYPE_ERROR = 0xFFFF;

    private FrameDescriptor() {
    }

    /** The type of the reply to a request of {@code requestType}. */
    public static int replyType(int requestType) {
        return requestType | REPLY_BIT;
    }

    /** Name of a request type, for messages; {@code "type N"} for unknown ones. */
    public static String typeName(int type) {
        return switch (type) {
            case TYPE_HELLO -> "HELLO";
            case TYPE_CREATE -> "CREATE";
            case TYPE_SEAL -> "SEAL";
            case TYPE_ABORT -> "ABORT";
            case TYPE_GET -> "GET";
            case TYPE_GET_MANY -> "GET_MANY";
            case TYPE_RELEASE -> "RELEASE";
            case TYPE_CONTAINS -> "CONTAINS";
            case TYPE_DELETE -> "DELETE";
            case TYPE_LIST -> "LIST";
            case TYPE_STAT -> "STAT";
            case TYPE_EVICT -> "EVICT";
            case TYPE_PUT -> "PUT";
            case TYPE_ERROR -> "ERROR";
            default -> "type " + type;
        };
    }

    /**
     * Checks a length field read from the wire.
     *
     * @throws ProtocolException when it is below {@link #MIN_LENGTH} or above {@link #MAX_LENGTH}
     */
    public static void checkLength(long length) {
        if (length < MIN_LENGTH || length > MAX_LENGTH) {
            throw new ProtocolException("frame length " + length + " is outside " + MIN_LENGTH + ".." + MAX_LENGTH
                + " (header " + HEADER_LENGTH + " bytes, body at most " + MAX_BODY_LENGTH + ")");
        }
    }
}
