package dev.depot.server.protocol;

import static dev.depot.server.protocol.FrameDescriptor.FLAGS_OFFSET;
import static dev.depot.server.protocol.FrameDescriptor.HEADER_LENGTH;
import static dev.depot.server.protocol.FrameDescriptor.LENGTH_OFFSET;
import static dev.depot.server.protocol.FrameDescriptor.REQUEST_ID_OFFSET;
import static dev.depot.server.protocol.FrameDescriptor.TYPE_OFFSET;
import static dev.depot.server.protocol.MessageDescriptor.ERROR_CODE_OFFSET;
import static dev.depot.server.protocol.MessageDescriptor.ERROR_MAX_MESSAGE_LENGTH;
import static dev.depot.server.protocol.MessageDescriptor.ERROR_MESSAGE_LENGTH_OFFSET;
import static dev.depot.server.protocol.MessageDescriptor.ERROR_MESSAGE_OFFSET;

import dev.depot.errors.ErrorCode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;

/** Builds and sends frames on a blocking channel. For one thread. */
final class FrameWriter {
    private final SocketChannel channel;

    FrameWriter(SocketChannel channel) {
        this.channel = channel;
    }

    /**
     * A buffer for a frame with a body of {@code bodyLength} bytes, header written, positioned at the body. Body
     * fields are written with absolute puts at {@code HEADER_LENGTH + offset} via {@link #body}.
     */
    static ByteBuffer frame(int type, int flags, long requestId, int bodyLength) {
        if (bodyLength < 0 || bodyLength > FrameDescriptor.MAX_BODY_LENGTH) {
            throw new IllegalArgumentException("frame body of " + bodyLength + " bytes is outside 0.."
                + FrameDescriptor.MAX_BODY_LENGTH);
        }
        ByteBuffer b = ByteBuffer.allocate(HEADER_LENGTH + bodyLength).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(LENGTH_OFFSET, HEADER_LENGTH - Integer.BYTES + bodyLength);
        b.putShort(TYPE_OFFSET, (short) type);
        b.putShort(FLAGS_OFFSET, (short) flags);
        b.putLong(REQUEST_ID_OFFSET, requestId);
        return b;
    }

    /** A little-endian view of a frame's body: offsets from {@link MessageDescriptor} apply directly. */
    static ByteBuffer body(ByteBuffer frame) {
        return frame.slice(HEADER_LENGTH, frame.capacity() - HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** An ERROR frame; the message is cut to {@link MessageDescriptor#ERROR_MAX_MESSAGE_LENGTH} bytes. */
    static ByteBuffer error(long requestId, ErrorCode code, String message) {
        byte[] text = utf8Prefix(message == null ? code.name() : message, ERROR_MAX_MESSAGE_LENGTH);
        ByteBuffer f = frame(FrameDescriptor.TYPE_ERROR, 0, requestId, ERROR_MESSAGE_OFFSET + text.length);
        ByteBuffer b = body(f);
        b.putInt(ERROR_CODE_OFFSET, code.wire);
        b.putInt(ERROR_MESSAGE_LENGTH_OFFSET, text.length);
        b.put(ERROR_MESSAGE_OFFSET, text);
        return f;
    }

    /** The UTF-8 bytes of {@code s}, cut at a character boundary to at most {@code max} bytes. */
    static byte[] utf8Prefix(String s, int max) {
        byte[] all = s.getBytes(StandardCharsets.UTF_8);
        if (all.length <= max) {
            return all;
        }
        int end = max;
        while (end > 0 && (all[end] & 0xC0) == 0x80) {
            end--;
        }
        byte[] cut = new byte[end];
        System.arraycopy(all, 0, cut, 0, end);
        return cut;
    }

    /** Writes the whole frame (blocking). */
    void send(ByteBuffer frame) throws IOException {
        frame.clear();
        while (frame.hasRemaining()) {
            channel.write(frame);
        }
    }
}
