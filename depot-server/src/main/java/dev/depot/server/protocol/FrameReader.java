package dev.depot.server.protocol;

import static dev.depot.server.protocol.FrameDescriptor.FLAGS_OFFSET;
import static dev.depot.server.protocol.FrameDescriptor.HEADER_LENGTH;
import static dev.depot.server.protocol.FrameDescriptor.LENGTH_OFFSET;
import static dev.depot.server.protocol.FrameDescriptor.REQUEST_ID_OFFSET;
import static dev.depot.server.protocol.FrameDescriptor.TYPE_OFFSET;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;

/**
 * Reads frames from a blocking channel. The length field is checked before anything is buffered, so a peer
 * cannot make us allocate more than {@link FrameDescriptor#MAX_LENGTH}. For one thread.
 */
final class FrameReader {
    private static final int SMALL = 4096;

    private final SocketChannel channel;
    /** Bytes read and not yet consumed lie in [0, position). */
    private ByteBuffer buffer = newBuffer(SMALL);
    private boolean endOfStream;

    FrameReader(SocketChannel channel) {
        this.channel = channel;
    }

    private static ByteBuffer newBuffer(int capacity) {
        return ByteBuffer.allocate(capacity).order(ByteOrder.LITTLE_ENDIAN);
    }

    /**
     * Reads the next frame.
     *
     * @return null when the peer closed the connection between frames
     * @throws EOFException when it closed it in the middle of a frame
     * @throws ProtocolException when the length field is out of bounds (the stream cannot be resynchronised)
     */
    Frame read() throws IOException {
        if (!fill(Integer.BYTES)) {
            if (buffer.position() == 0) {
                return null;
            }
            throw new EOFException("connection closed after " + buffer.position() + " bytes of a frame's length field");
        }
        long length = Integer.toUnsignedLong(buffer.getInt(LENGTH_OFFSET));
        FrameDescriptor.checkLength(length);
        int total = Integer.BYTES + (int) length;
        if (!fill(total)) {
            throw new EOFException("connection closed in a frame of " + total + " bytes after " + buffer.position());
        }
        int type = Short.toUnsignedInt(buffer.getShort(TYPE_OFFSET));
        int flags = Short.toUnsignedInt(buffer.getShort(FLAGS_OFFSET));
        long requestId = buffer.getLong(REQUEST_ID_OFFSET);
        byte[] body = new byte[total - HEADER_LENGTH];
        buffer.get(HEADER_LENGTH, body);
        consume(total);
        return new Frame(type, flags, requestId, ByteBuffer.wrap(body).order(ByteOrder.LITTLE_ENDIAN));
    }

    /** Reads until {@code n} bytes are buffered; false at end of stream. */
    private boolean fill(int n) throws IOException {
        if (buffer.capacity() < n) {
            ByteBuffer bigger = newBuffer(n);
            buffer.flip();
            bigger.put(buffer);
            buffer = bigger;
        }
        while (buffer.position() < n) {
            if (endOfStream || channel.read(buffer) < 0) {
                endOfStream = true;
                return false;
            }
        }
        return true;
    }

    private void consume(int n) {
        buffer.flip();
        buffer.position(n);
        if (buffer.capacity() > SMALL && buffer.remaining() <= SMALL) {
            ByteBuffer small = newBuffer(SMALL);
            small.put(buffer);
            buffer = small;
        } else {
            buffer.compact();
        }
    }

    /** What {@link #poll} saw. */
    enum Peer { IDLE, SENT_MORE, CLOSED }

    /**
     * Looks, without blocking, whether the peer has sent more bytes (a next request) or closed its end. Bytes
     * that arrived are kept for {@link #read}.
     */
    Peer poll() throws IOException {
        if (!endOfStream && buffer.hasRemaining()) {
            channel.configureBlocking(false);
            try {
                if (channel.read(buffer) < 0) {
                    endOfStream = true;
                }
            } finally {
                channel.configureBlocking(true);
            }
        }
        if (buffer.position() > 0) {
            return Peer.SENT_MORE;
        }
        return endOfStream ? Peer.CLOSED : Peer.IDLE;
    }
}
