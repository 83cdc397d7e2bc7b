package dev.depot.server.protocol;

import java.nio.ByteBuffer;

/**
 * One frame read from the wire. {@code body} is a little-endian buffer of exactly the body's bytes (a copy, so
 * it stays valid after the next read); its reads are bounds-checked by {@link ByteBuffer}.
 */
record Frame(int type, int flags, long requestId, ByteBuffer body) {
    /** Fails unless the body is exactly {@code expected} bytes. */
    void expectBodyLength(long expected) {
        if (body.remaining() != expected) {
            throw new ProtocolException(FrameDescriptor.typeName(type) + " needs a body of " + expected
                + " bytes, got " + body.remaining());
        }
    }

    /** Fails unless the body has at least {@code expected} bytes. */
    void expectBodyLengthAtLeast(long expected) {
        if (body.remaining() < expected) {
            throw new ProtocolException(FrameDescriptor.typeName(type) + " needs a body of at least " + expected
                + " bytes, got " + body.remaining());
        }
    }
}
