package dev.depot.server.protocol;

import static dev.depot.server.protocol.FrameDescriptor.*;
import static dev.depot.server.protocol.MessageDescriptor.*;

import dev.depot.client.DepotClient;
import dev.depot.client.DepotClient.CreateOption;
import dev.depot.core.clients.ClientTableDescriptor;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectInfo;
import dev.depot.client.ObjectView;
import dev.depot.client.ObjectWriter;
import dev.depot.client.internal.StoreClients;
import dev.depot.core.store.Store;
import dev.depot.errors.DepotException;
import dev.depot.errors.ErrorCode;
import dev.depot.errors.ObjectMissingException;
import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * One client connection, served on its own thread from HELLO to end of stream. Requests are answered in order.
 * Everything the connection holds ({@link ConnectionObjects}) is released when it ends, however it ends.
 */
final class Connection implements Runnable {
    /** Longest single wait for a seal, so a vanished peer or a closing daemon is noticed. */
    private static final long WAIT_SLICE_MILLIS = 100;

    private final ControlServer.Context context;
    /**
     * This connection's own client of the store (a session: its own slot and pins), opened by the first request
     * that pins or creates ({@link #session}); null until then.
     */
    private DepotClient session;
    private final SocketChannel channel;
    private final String name;
    private final FrameReader reader;
    private final FrameWriter writer;
    private final ConnectionObjects objects = new ConnectionObjects();
    private boolean greeted;
    /** The request being answered stopped waiting: its client has sent the next one. */
    private boolean cancelled;

    Connection(ControlServer.Context context, SocketChannel channel, String name) {
        this.context = context;
        this.channel = channel;
        this.name = name;
        this.reader = new FrameReader(channel);
        this.writer = new FrameWriter(channel);
    }

    /** Ends the connection from another thread: the handler sees end of stream and cleans up. */
    void shutdown() {
        try {
            channel.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    @Override
    public void run() {
        try {
            serve();
        } catch (EOFException | ClosedChannelException | PeerGone e) {
            // the client went away; release what it held below
        } catch (IOException e) {
            if (!context.closing()) {
                context.log().accept(name + ": " + e.getMessage());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            releaseAll();
            shutdown();
        }
    }

    private void serve() throws IOException, InterruptedException {
        String refusal = context.checkPeer(channel);
        if (refusal != null) {
            context.log().accept(name + ": " + refusal);
            writer.send(FrameWriter.error(0, ErrorCode.PERMISSION_DENIED, refusal));
            return;
        }
        while (!context.closing()) {
            Frame frame;
            try {
                frame = reader.read();
            } catch (ProtocolException e) {
                writer.send(FrameWriter.error(0, ErrorCode.BAD_REQUEST, e.getMessage() + "; closing the connection"));
                return;
            }
            if (frame == null || !answer(frame)) {
                return;
            }
        }
    }

    /** Answers one request; false when the connection must end after it. */
    private boolean answer(Frame f) throws IOException, InterruptedException {
        context.counters().request(typeName(f.type()));
        if (!greeted && f.type() != TYPE_HELLO) {
            sendError(f, ErrorCode.BAD_REQUEST,
                "the first request must be HELLO, got " + typeName(f.type()) + "; closing the connection");
            return false;
        }
        ByteBuffer reply;
        try {
            if (f.flags() != 0) {
                throw new ProtocolException(typeName(f.type()) + " request has flags " + f.flags() + "; requests carry none");
            }
            cancelled = false;
            reply = switch (f.type()) {
                case TYPE_HELLO -> hello(f);
                case TYPE_CREATE -> create(f);
                case TYPE_SEAL -> seal(f);
                case TYPE_ABORT -> abort(f);
                case TYPE_GET -> get(f);
                case TYPE_GET_MANY -> getMany(f);
                case TYPE_RELEASE -> release(f);
                case TYPE_CONTAINS -> contains(f);
                case TYPE_DELETE -> delete(f);
                case TYPE_LIST -> list(f);
                case TYPE_STAT -> stat(f);
                case TYPE_EVICT -> evict(f);
                case TYPE_PUT -> put(f);
                default -> throw new ProtocolException("unknown request type " + f.type());
            };
        } catch (VersionMismatch e) {
            sendError(f, ErrorCode.VERSION_MISMATCH, e.getMessage());
            return false;
        } catch (DepotException e) {
            sendError(f, e.code(), e.getMessage());
            return true;
        } catch (IllegalArgumentException | IllegalStateException e) {
            sendError(f, ErrorCode.BAD_REQUEST, e.getMessage());
            return true;
        } catch (RuntimeException e) {
            context.log().accept(name + ": " + typeName(f.type()) + " failed: " + e);
            sendError(f, ErrorCode.INTERNAL, "the daemon failed: " + e);
            return true;
        }
        if (reply != null) {
            writer.send(reply);
        }
        return true;
    }

    private void sendError(Frame f, ErrorCode code, String message) throws IOException {
        context.counters().error(typeName(f.type()), code);
        writer.send(FrameWriter.error(f.requestId(), code, message));
    }

    private ByteBuffer hello(Frame f) {
        if (greeted) {
            throw new ProtocolException("HELLO was sent twice on one connection");
        }
        f.expectBodyLengthAtLeast(HELLO_LENGTH);
        ByteBuffer b = f.body();
        int major = Short.toUnsignedInt(b.getShort(HELLO_MAJOR_OFFSET));
        int minor = Short.toUnsignedInt(b.getShort(HELLO_MINOR_OFFSET));
        if (major != VERSION_MAJOR) {
            throw new VersionMismatch("the client speaks protocol " + major + "." + minor + " but this daemon speaks "
                + VERSION_MAJOR + "." + VERSION_MINOR + "; use a client of major version " + VERSION_MAJOR);
        }
        greeted = true;
        return Replies.welcome(f, context);
    }

    /**
     * The connection's session, opened at its first request that pins or creates, so that what it holds is
     * released when the connection ends, however it ends. Not at HELLO: a Python client pins and creates in a slot
     * of its own, without the daemon, and only comes here when the store is full or an object is spilled, so most
     * connections never need one (each session is a slot of the client table, out of its {@code --max-clients}).
     * Requests that leave nothing held (CONTAINS, DELETE, LIST, STAT, EVICT) use the daemon's own client.
     */
    private DepotClient session() {
        if (session == null) {
            session = StoreClients.session(context.store(), ClientTableDescriptor.KIND_PYTHON);
        }
        return session;
    }

    private ByteBuffer create(Frame f) {
        ObjectWriter w = createFrom(f, false);
        objects.addWriter(w);
        return Replies.created(f, context.fileOffsetOf(w.data()), w.data().byteSize());
    }

    /** CREATE with the data inline, then SEAL: one round trip for a small object. */
    private ByteBuffer put(Frame f) {
        ObjectWriter w = createFrom(f, true);
        MemorySegment data = w.data();
        long offset = context.fileOffsetOf(data);
        try {
            int at = PUT_METADATA_OFFSET + f.body().getInt(PUT_METADATA_LENGTH_OFFSET);
            data.copyFrom(MemorySegment.ofBuffer(f.body().slice(at, (int) data.byteSize())));
            w.seal();
        } catch (RuntimeException | Error e) {
            w.abort();
            throw e;
        }
        return Replies.created(f, offset, data.byteSize());
    }

    /** Creates the object a CREATE (or PUT, whose data follows the metadata) asks for. */
    private ObjectWriter createFrom(Frame f, boolean dataInline) {
        f.expectBodyLengthAtLeast(CREATE_METADATA_OFFSET);
        ByteBuffer b = f.body();
        ObjectId id = idAt(b, CREATE_ID_OFFSET);
        String what = typeName(f.type());
        int flags = b.getInt(CREATE_FLAGS_OFFSET);
        if ((flags & ~CREATE_FLAGS_KNOWN) != 0 || (dataInline && (flags & CREATE_FLAG_TIMEOUT) != 0)) {
            throw new ProtocolException(what + " has unknown flags " + Integer.toHexString(flags));
        }
        long size = b.getLong(CREATE_SIZE_OFFSET);
        if (size < 0) {
            throw new ProtocolException(what + " of object " + id + " asks for a negative size " + size);
        }
        long metadataLength = Integer.toUnsignedLong(b.getInt(CREATE_METADATA_LENGTH_OFFSET));
        if (metadataLength > Store.MAX_METADATA_LENGTH) {
            throw new ProtocolException(what + " of object " + id + " carries " + metadataLength
                + " bytes of metadata; the limit is " + Store.MAX_METADATA_LENGTH);
        }
        if (dataInline && size > MAX_BODY_LENGTH) {
            throw new ProtocolException("PUT of object " + id + " carries " + size + " bytes of data; a body holds at"
                + " most " + MAX_BODY_LENGTH + ": use CREATE and SEAL");
        }
        int timeoutLength = (flags & CREATE_FLAG_TIMEOUT) != 0 ? Long.BYTES : 0;
        f.expectBodyLength(CREATE_METADATA_OFFSET + metadataLength + timeoutLength + (dataInline ? size : 0));
        byte[] metadata = new byte[(int) metadataLength];
        b.get(CREATE_METADATA_OFFSET, metadata);
        long timeoutMillis = timeoutLength == 0 ? 0 : b.getLong(CREATE_METADATA_OFFSET + (int) metadataLength);
        List<CreateOption> options = new ArrayList<>(2);
        if ((flags & CREATE_FLAG_NO_EVICT) != 0) {
            options.add(CreateOption.NO_EVICT);
        }
        if ((flags & CREATE_FLAG_KEEP) != 0) {
            options.add(CreateOption.KEEP);
        }
        return session().create(id, size, metadata, timeoutMillis < 0 ? Duration.ofNanos(-1)
            : Duration.ofMillis(timeoutMillis), options.toArray(CreateOption[]::new));
    }

    private ByteBuffer seal(Frame f) {
        objects.takeWriter(idOnly(f)).seal();
        return Replies.empty(f);
    }

    private ByteBuffer abort(Frame f) {
        objects.takeWriter(idOnly(f)).abort();
        return Replies.empty(f);
    }

    private ByteBuffer get(Frame f) throws IOException, InterruptedException {
        f.expectBodyLength(GET_LENGTH);
        ObjectId id = idAt(f.body(), GET_ID_OFFSET);
        long timeout = f.body().getLong(GET_TIMEOUT_OFFSET);
        ObjectView v = await(id, timeout);
        if (v == null) {
            throw new ObjectMissingException("object " + id + (timeout == 0 ? " does not exist"
                : cancelled ? " was not sealed before the client sent its next request"
                : " was not sealed within " + timeout + " ms") + " in the store at " + context.client().directory());
        }
        long handle = objects.addView(v);
        ByteBuffer reply = FrameWriter.frame(replyType(TYPE_GET), 0, f.requestId(), LOCATION_LENGTH);
        putLocation(FrameWriter.body(reply), 0, v, handle);
        return reply;
    }

    private ByteBuffer getMany(Frame f) throws IOException, InterruptedException {
        f.expectBodyLengthAtLeast(GET_MANY_IDS_OFFSET);
        ByteBuffer b = f.body();
        long timeout = b.getLong(GET_MANY_TIMEOUT_OFFSET);
        long count = Integer.toUnsignedLong(b.getInt(GET_MANY_COUNT_OFFSET));
        if (count > GET_MANY_MAX_IDS) {
            throw new ProtocolException("GET_MANY asks for " + count + " objects; the limit is " + GET_MANY_MAX_IDS);
        }
        f.expectBodyLength(GET_MANY_IDS_OFFSET + count * ID_LENGTH);
        long deadline = timeout > 0 ? System.nanoTime() + timeout * 1_000_000L : 0;
        ByteBuffer reply = FrameWriter.frame(replyType(TYPE_GET_MANY), 0, f.requestId(),
            COUNT_ENTRIES_OFFSET + (int) count * LOCATION_LENGTH);
        ByteBuffer r = FrameWriter.body(reply);
        r.putInt(COUNT_OFFSET, (int) count);
        ObjectView[] got = new ObjectView[(int) count];
        boolean done = false;
        try {
            for (int i = 0; i < count; i++) {
                ObjectId id = idAt(b, GET_MANY_IDS_OFFSET + i * ID_LENGTH);
                long left = timeout <= 0 ? timeout : Math.max(0, (deadline - System.nanoTime()) / 1_000_000L);
                got[i] = await(id, left);
            }
            done = true;
        } finally {
            for (int i = 0; i < count; i++) {
                ObjectView v = got[i];
                if (v == null) {
                    continue;
                }
                if (done) {
                    putLocation(r, COUNT_ENTRIES_OFFSET + i * LOCATION_LENGTH, v, objects.addView(v));
                } else {
                    v.close();
                }
            }
        }
        return reply;
    }

    /**
     * Gets {@code id}, waiting up to {@code timeout} ms (0: not at all; negative: until it comes). The wait is
     * cut into slices so that it ends early when the client hangs up or the daemon closes ({@link PeerGone}),
     * or when the client sends its next request: a client only does that after giving up on this one (it was
     * interrupted), so the wait ends as if timed out, this request is answered, then the next one.
     */
    private ObjectView await(ObjectId id, long timeout) throws IOException, InterruptedException {
        ObjectView v = session().tryGet(id, 0);
        if (v != null || timeout == 0 || cancelled) {
            return v;
        }
        context.counters().waitStarted();
        long deadline = System.nanoTime() + timeout * 1_000_000L;
        while (true) {
            long left = timeout < 0 ? WAIT_SLICE_MILLIS
                : Math.min(WAIT_SLICE_MILLIS, (deadline - System.nanoTime()) / 1_000_000L);
            if (left <= 0) {
                return session().tryGet(id, 0);
            }
            v = context.waiter().await(session(), id, left);
            if (v != null) {
                context.counters().wokeUp();
                return v;
            }
            if (context.closing()) {
                throw new PeerGone();
            }
            switch (reader.poll()) {
                case CLOSED -> throw new PeerGone();
                case SENT_MORE -> {
                    cancelled = true;
                    return session().tryGet(id, 0);
                }
                case IDLE -> { }
            }
        }
    }

    private void putLocation(ByteBuffer r, int at, ObjectView v, long handle) {
        Replies.putLocation(r, at, context.fileOffsetOf(v.data()), v, handle);
    }

    private ByteBuffer release(Frame f) {
        f.expectBodyLength(RELEASE_LENGTH);
        objects.release(idAt(f.body(), RELEASE_ID_OFFSET), f.body().getLong(RELEASE_HANDLE_OFFSET));
        return Replies.empty(f);
    }

    private ByteBuffer contains(Frame f) {
        return Replies.bool(f, context.client().contains(idOnly(f)));
    }

    private ByteBuffer delete(Frame f) {
        return Replies.bool(f, context.client().delete(idOnly(f)));
    }

    /** Sends the listing in frames of at most {@link MessageDescriptor#LIST_ENTRIES_PER_FRAME} entries. */
    private ByteBuffer list(Frame f) throws IOException {
        f.expectBodyLength(0);
        List<ObjectInfo> all = context.client().list();
        int start = 0;
        while (true) {
            int n = Math.min(LIST_ENTRIES_PER_FRAME, all.size() - start);
            ByteBuffer reply = Replies.listFrame(f, all, start, n);
            if (start + n == all.size()) {
                return reply;
            }
            writer.send(reply);
            start += n;
        }
    }

    private ByteBuffer stat(Frame f) {
        f.expectBodyLength(0);
        return Replies.stat(f, context.client().stats(), objects.viewCount(), objects.writerCount());
    }

    private ByteBuffer evict(Frame f) {
        f.expectBodyLength(EVICT_LENGTH);
        long bytes = f.body().getLong(EVICT_BYTES_OFFSET);
        if (bytes < 0) {
            throw new ProtocolException("EVICT of a negative byte count " + bytes);
        }
        return Replies.evicted(f, context.client().evict(bytes));
    }

    private static ObjectId idOnly(Frame f) {
        f.expectBodyLength(ID_REQUEST_LENGTH);
        return idAt(f.body(), ID_REQUEST_ID_OFFSET);
    }

    private static ObjectId idAt(ByteBuffer b, int offset) {
        byte[] id = new byte[ID_LENGTH];
        b.get(offset, id);
        return ObjectId.fromBytes(id);
    }

    private void releaseAll() {
        int views = objects.viewCount();
        int writers = objects.writerCount();
        try {
            objects.closeAll();
        } catch (RuntimeException e) {
            if (!context.closing()) {
                context.log().accept(name + ": releasing its objects failed: " + e);
            }
        }
        if ((views > 0 || writers > 0) && !context.closing()) {
            context.log().accept(name + " ended holding " + views + " pin(s) and " + writers
                + " unsealed object(s); released and aborted them");
        }
        if (session != null) {
            try {
                session.close();
            } catch (RuntimeException e) {
                context.log().accept(name + ": closing its session failed: " + e);
            }
        }
    }

    /** The peer hung up (or the daemon is closing) while its request waited. */
    private static final class PeerGone extends IOException {
        private static final long serialVersionUID = 1L;

        PeerGone() {
            super("the client hung up while waiting");
        }
    }

    /** HELLO of another major version: answered, then the connection ends. */
    private static final class VersionMismatch extends DepotException {
        private static final long serialVersionUID = 1L;

        VersionMismatch(String message) {
            super(message);
        }

        @Override
        public ErrorCode code() {
            return ErrorCode.VERSION_MISMATCH;
        }
    }
}
