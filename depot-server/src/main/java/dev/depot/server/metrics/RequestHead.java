package dev.depot.server.metrics;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/**
 * The request line of an HTTP/1.x request, read with its header lines (which {@code /metrics} does not need) up
 * to the empty line that ends them. Reading stops there: a body or a pipelined next request is never read.
 *
 * @param method the method token, {@code GET}
 * @param path the target's path, without its query ({@code /metrics} for {@code /metrics?x=1})
 */
record RequestHead(String method, String path) {
    /** Longest request head read: the request line and every header line, with their line ends. */
    static final int MAX_BYTES = 8192;

    /** A request that gets an error status without being served. */
    static final class Malformed extends Exception {
        private static final long serialVersionUID = 1L;
        private final int status;

        Malformed(int status, String message) {
            super(message);
            this.status = status;
        }

        int status() {
            return status;
        }
    }

    /**
     * Reads one request head from {@code in}, a byte at a time from its buffer, up to {@link #MAX_BYTES}.
     *
     * @throws Malformed with 431 when the head is longer than {@link #MAX_BYTES}; with 400 when the request line
     *     is not {@code METHOD TARGET HTTP/1.x}
     * @throws EOFException when the client closes before the head ends
     */
    static RequestHead read(InputStream in) throws IOException, Malformed {
        byte[] head = new byte[MAX_BYTES];
        int length = 0;
        int lineStart = 0;
        int requestLineStart = 0;
        int requestLineEnd = -1;
        while (true) {
            int b = in.read();
            if (b < 0) {
                throw new EOFException("the client closed after " + length + " bytes of a request head");
            }
            if (length == MAX_BYTES) {
                throw new Malformed(431, "request head longer than " + MAX_BYTES + " bytes");
            }
            head[length++] = (byte) b;
            if (b == '\n') {
                int lineLength = length - lineStart - (length >= 2 && head[length - 2] == '\r' ? 2 : 1);
                if (requestLineEnd < 0 && lineLength == 0) {
                    requestLineStart = length; // empty lines before the request line are ignored (RFC 9112 2.2)
                } else if (requestLineEnd < 0) {
                    requestLineEnd = lineStart + lineLength;
                } else if (lineLength == 0) {
                    return parse(new String(head, requestLineStart, requestLineEnd - requestLineStart,
                        StandardCharsets.ISO_8859_1));
                }
                lineStart = length;
            }
        }
    }

    private static RequestHead parse(String requestLine) throws Malformed {
        String[] parts = requestLine.split(" ", -1);
        if (parts.length != 3 || parts[0].isEmpty() || parts[1].isEmpty() || !parts[2].startsWith("HTTP/1.")) {
            throw new Malformed(400, "not an HTTP/1.x request line: "
                + requestLine.substring(0, Math.min(requestLine.length(), 100)));
        }
        String target = parts[1];
        int query = target.indexOf('?');
        String path = query < 0 ? target : target.substring(0, query);
        int scheme = path.indexOf("://");
        if (scheme > 0) {
            // absolute form, as sent to a proxy: http://host:port/metrics
            int slash = path.indexOf('/', scheme + 3);
            path = slash < 0 ? "/" : path.substring(slash);
        }
        return new RequestHead(parts[0], path);
    }
}
