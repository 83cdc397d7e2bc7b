package dev.depot.server.protocol;

import static dev.depot.server.protocol.FrameDescriptor.*;
import static dev.depot.server.protocol.MessageDescriptor.*;

import dev.depot.client.ObjectId;
import dev.depot.core.store.StoreFile;
import dev.depot.errors.ErrorCode;
import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * A minimal client of the control protocol for tests, written from docs/PROTOCOL.md: frames by hand, maps the
 * store file itself (as the Python client does) and reads and writes objects at the offsets the daemon replies.
 */
final class ProtocolTestClient implements AutoCloseable {
    /** An ERROR reply. */
    static final class RemoteError extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final ErrorCode code;

        RemoteError(ErrorCode code, String message) {
            super(code + ": " + message);
            this.code = code;
        }
    }

    record Reply(int type, int flags, long requestId, ByteBuffer body) {
    }

    record Welcome(int major, int minor, int daemonPid, long fileLength, long heapOffset, long heapLength,
                   int maxBody, int maxMetadata, int maxGetMany, long storeDevice, long storeInode) {
    }

    record Location(long dataOffset, long dataSize, long metadataOffset, int metadataLength, boolean found,
                    long handle) {
    }

    record Entry(ObjectId id, int state, int metadataLength, int pins, long dataSize) {
    }

    private final SocketChannel channel;
    private final Arena arena = Arena.ofShared();
    private MemorySegment mapping;
    private long nextRequestId = 1;

    private ProtocolTestClient(SocketChannel channel) {
        this.channel = channel;
    }

    /** Connects without saying HELLO. */
    static ProtocolTestClient connect(Path dir) throws IOException {
        SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX);
        ch.connect(UnixDomainSocketAddress.of(ControlServer.socketIn(dir)));
        return new ProtocolTestClient(ch);
    }

    /** Connects, says HELLO and maps the store file. */
    static ProtocolTestClient open(Path dir) throws IOException {
        ProtocolTestClient c = connect(dir);
        Welcome w = c.hello(VERSION_MAJOR, VERSION_MINOR);
        // As the Python client: the path is DIR's own store file, never one the daemon names.
        try (FileChannel f = FileChannel.open(StoreFile.fileIn(dir), StandardOpenOption.READ, StandardOpenOption.WRITE,
            LinkOption.NOFOLLOW_LINKS)) {
            c.mapping = f.map(FileChannel.MapMode.READ_WRITE, 0, w.fileLength(), c.arena);
        }
        return c;
    }

    MemorySegment mapping() {
        return mapping;
    }

    Welcome hello(int major, int minor) throws IOException {
        ByteBuffer b = body(HELLO_LENGTH);
        b.putShort(HELLO_MAJOR_OFFSET, (short) major);
        b.putShort(HELLO_MINOR_OFFSET, (short) minor);
        b.putInt(HELLO_PID_OFFSET, (int) ProcessHandle.current().pid());
        ByteBuffer r = call(TYPE_HELLO, b).body();
        if (r.remaining() != WELCOME_LENGTH) {
            throw new AssertionError("HELLO reply of " + r.remaining() + " bytes, not " + WELCOME_LENGTH);
        }
        return new Welcome(r.getShort(WELCOME_MAJOR_OFFSET), r.getShort(WELCOME_MINOR_OFFSET),
            r.getInt(WELCOME_DAEMON_PID_OFFSET), r.getLong(WELCOME_FILE_LENGTH_OFFSET),
            r.getLong(WELCOME_HEAP_OFFSET_OFFSET), r.getLong(WELCOME_HEAP_LENGTH_OFFSET), r.getInt(WELCOME_MAX_BODY_OFFSET),
            r.getInt(WELCOME_MAX_METADATA_OFFSET), r.getInt(WELCOME_MAX_GET_MANY_OFFSET),
            r.getLong(WELCOME_STORE_DEVICE_OFFSET), r.getLong(WELCOME_STORE_INODE_OFFSET));
    }

    long create(ObjectId id, long size, byte[] metadata, boolean noEvict) throws IOException {
        ByteBuffer b = body(CREATE_METADATA_OFFSET + metadata.length);
        b.put(CREATE_ID_OFFSET, id.toBytes());
        b.putInt(CREATE_FLAGS_OFFSET, noEvict ? CREATE_FLAG_NO_EVICT : 0);
        b.putLong(CREATE_SIZE_OFFSET, size);
        b.putInt(CREATE_METADATA_LENGTH_OFFSET, metadata.length);
        b.put(CREATE_METADATA_OFFSET, metadata);
        ByteBuffer r = call(TYPE_CREATE, b).body();
        if (r.getLong(CREATED_SIZE_OFFSET) != size) {
            throw new AssertionError("CREATE replied size " + r.getLong(CREATED_SIZE_OFFSET));
        }
        return r.getLong(CREATED_DATA_OFFSET_OFFSET);
    }

    /** PUT: creates, fills and seals in one request; returns the data offset. */
    long put(ObjectId id, byte[] data, byte[] metadata) throws IOException {
        ByteBuffer b = body(PUT_METADATA_OFFSET + metadata.length + data.length);
        b.put(PUT_ID_OFFSET, id.toBytes());
        b.putLong(PUT_SIZE_OFFSET, data.length);
        b.putInt(PUT_METADATA_LENGTH_OFFSET, metadata.length);
        b.put(PUT_METADATA_OFFSET, metadata);
        b.put(PUT_METADATA_OFFSET + metadata.length, data);
        return call(TYPE_PUT, b).body().getLong(CREATED_DATA_OFFSET_OFFSET);
    }

    void seal(ObjectId id) throws IOException {
        call(TYPE_SEAL, idBody(id));
    }

    void abort(ObjectId id) throws IOException {
        call(TYPE_ABORT, idBody(id));
    }

    /** Releases the pin of a location that GET or GET_MANY replied with. */
    void release(ObjectId id, Location pinned) throws IOException {
        release(id, pinned.handle());
    }

    void release(ObjectId id, long handle) throws IOException {
        ByteBuffer b = body(RELEASE_LENGTH);
        b.put(RELEASE_ID_OFFSET, id.toBytes());
        b.putLong(RELEASE_HANDLE_OFFSET, handle);
        call(TYPE_RELEASE, b);
    }

    boolean contains(ObjectId id) throws IOException {
        return call(TYPE_CONTAINS, idBody(id)).body().getInt(BOOLEAN_VALUE_OFFSET) == 1;
    }

    boolean delete(ObjectId id) throws IOException {
        return call(TYPE_DELETE, idBody(id)).body().getInt(BOOLEAN_VALUE_OFFSET) == 1;
    }

    Location get(ObjectId id, long timeoutMillis) throws IOException {
        ByteBuffer b = body(GET_LENGTH);
        b.put(GET_ID_OFFSET, id.toBytes());
        b.putLong(GET_TIMEOUT_OFFSET, timeoutMillis);
        return location(call(TYPE_GET, b).body(), 0);
    }

    List<Location> getMany(List<ObjectId> ids, long timeoutMillis) throws IOException {
        ByteBuffer b = body(GET_MANY_IDS_OFFSET + ids.size() * ID_LENGTH);
        b.putLong(GET_MANY_TIMEOUT_OFFSET, timeoutMillis);
        b.putInt(GET_MANY_COUNT_OFFSET, ids.size());
        for (int i = 0; i < ids.size(); i++) {
            b.put(GET_MANY_IDS_OFFSET + i * ID_LENGTH, ids.get(i).toBytes());
        }
        ByteBuffer r = call(TYPE_GET_MANY, b).body();
        List<Location> out = new ArrayList<>();
        for (int i = 0; i < r.getInt(COUNT_OFFSET); i++) {
            out.add(location(r, COUNT_ENTRIES_OFFSET + i * LOCATION_LENGTH));
        }
        return out;
    }

    private static Location location(ByteBuffer r, int at) {
        return new Location(r.getLong(at + LOCATION_DATA_OFFSET_OFFSET), r.getLong(at + LOCATION_DATA_SIZE_OFFSET),
            r.getLong(at + LOCATION_METADATA_OFFSET_OFFSET), r.getInt(at + LOCATION_METADATA_LENGTH_OFFSET),
            r.getInt(at + LOCATION_FOUND_OFFSET) == 1, r.getLong(at + LOCATION_HANDLE_OFFSET));
    }

    List<Entry> list() throws IOException {
        send(frame(TYPE_LIST, 0, body(0)));
        List<Entry> out = new ArrayList<>();
        while (true) {
            Reply reply = checked(readReply());
            ByteBuffer r = reply.body();
            for (int i = 0; i < r.getInt(COUNT_OFFSET); i++) {
                int at = COUNT_ENTRIES_OFFSET + i * ENTRY_LENGTH;
                byte[] id = new byte[ID_LENGTH];
                r.get(at + ENTRY_ID_OFFSET, id);
                out.add(new Entry(ObjectId.fromBytes(id), r.getInt(at + ENTRY_STATE_OFFSET),
                    r.getInt(at + ENTRY_METADATA_LENGTH_OFFSET), r.getInt(at + ENTRY_PINS_OFFSET),
                    r.getLong(at + ENTRY_DATA_SIZE_OFFSET)));
            }
            if ((reply.flags() & FLAG_MORE) == 0) {
                return out;
            }
        }
    }

    /** The STAT reply body; read it with the STAT_* offsets. */
    ByteBuffer stat() throws IOException {
        return call(TYPE_STAT, body(0)).body();
    }

    long evict(long bytes) throws IOException {
        ByteBuffer b = body(EVICT_LENGTH);
        b.putLong(EVICT_BYTES_OFFSET, bytes);
        return call(TYPE_EVICT, b).body().getLong(EVICT_BYTES_OFFSET);
    }

    /** Sends a request and reads its one reply; an ERROR reply is thrown as {@link RemoteError}. */
    Reply call(int type, ByteBuffer body) throws IOException {
        long id = nextRequestId;
        send(frame(type, 0, body));
        Reply r = checked(readReply());
        if (r.requestId() != id || r.type() != replyType(type)) {
            throw new AssertionError("reply " + r + " does not answer request " + id + " of type " + type);
        }
        return r;
    }

    private static Reply checked(Reply r) {
        if (r.type() == TYPE_ERROR) {
            ByteBuffer b = r.body();
            byte[] text = new byte[b.getInt(ERROR_MESSAGE_LENGTH_OFFSET)];
            b.get(ERROR_MESSAGE_OFFSET, text);
            throw new RemoteError(ErrorCode.ofWire(b.getInt(ERROR_CODE_OFFSET)), new String(text, StandardCharsets.UTF_8));
        }
        return r;
    }

    static ByteBuffer body(int length) {
        return ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
    }

    private static ByteBuffer idBody(ObjectId id) {
        return body(ID_REQUEST_LENGTH).put(ID_REQUEST_ID_OFFSET, id.toBytes());
    }

    /** A whole frame with the next request id. */
    ByteBuffer frame(int type, int flags, ByteBuffer body) {
        ByteBuffer f = body(HEADER_LENGTH + body.capacity());
        f.putInt(LENGTH_OFFSET, MIN_LENGTH + body.capacity());
        f.putShort(TYPE_OFFSET, (short) type);
        f.putShort(FLAGS_OFFSET, (short) flags);
        f.putLong(REQUEST_ID_OFFSET, nextRequestId++);
        f.put(HEADER_LENGTH, body, 0, body.capacity());
        return f;
    }

    void send(ByteBuffer bytes) throws IOException {
        bytes.clear();
        while (bytes.hasRemaining()) {
            channel.write(bytes);
        }
    }

    void sendRaw(byte[] bytes) throws IOException {
        send(ByteBuffer.wrap(bytes));
    }

    /** Reads one frame, whatever its type. */
    Reply readReply() throws IOException {
        ByteBuffer head = body(HEADER_LENGTH);
        readFully(head);
        int length = head.getInt(LENGTH_OFFSET);
        ByteBuffer b = body(length - MIN_LENGTH);
        readFully(b);
        return new Reply(Short.toUnsignedInt(head.getShort(TYPE_OFFSET)), head.getShort(FLAGS_OFFSET),
            head.getLong(REQUEST_ID_OFFSET), b.clear());
    }

    /** Reads one reply and returns the error it carries (fails if it is not an ERROR). */
    RemoteError readError() throws IOException {
        try {
            checked(readReply());
        } catch (RemoteError e) {
            return e;
        }
        throw new AssertionError("expected an ERROR reply");
    }

    /** True when the daemon closed the connection (reads to end of stream). */
    boolean isClosedByPeer() throws IOException {
        ByteBuffer b = ByteBuffer.allocate(1);
        try {
            return channel.read(b) < 0;
        } catch (IOException e) {
            return true;
        }
    }

    private void readFully(ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            if (channel.read(b) < 0) {
                throw new EOFException("the daemon closed the connection");
            }
        }
    }

    @Override
    public void close() throws IOException {
        try {
            channel.close();
        } finally {
            arena.close();
        }
    }
}
