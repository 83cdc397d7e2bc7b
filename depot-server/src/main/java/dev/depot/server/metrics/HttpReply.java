package dev.depot.server.metrics;

import java.nio.charset.StandardCharsets;

/**
 * An HTTP/1.1 response as the bytes written to the socket in one go: status line, headers, body. Every reply
 * says {@code Connection: close}: the endpoint answers one request per connection (see {@link MetricsServer}).
 */
final class HttpReply {
    private static final String TEXT = "text/plain; charset=utf-8";

    private HttpReply() {
    }

    /** {@code status} with {@code body} of {@code contentType}; a reply to HEAD has the headers only. */
    static byte[] of(int status, String contentType, byte[] body, boolean head, String extraHeaders) {
        byte[] headers = ("HTTP/1.1 " + status + " " + reason(status) + "\r\n"
            + "Content-Type: " + contentType + "\r\n"
            + "Content-Length: " + body.length + "\r\n"
            + extraHeaders
            + "Connection: close\r\n"
            + "\r\n").getBytes(StandardCharsets.ISO_8859_1);
        if (head) {
            return headers;
        }
        byte[] reply = new byte[headers.length + body.length];
        System.arraycopy(headers, 0, reply, 0, headers.length);
        System.arraycopy(body, 0, reply, headers.length, body.length);
        return reply;
    }

    /** {@code status} with a line of text, for errors. */
    static byte[] text(int status, String line, String extraHeaders) {
        return of(status, TEXT, (line + "\n").getBytes(StandardCharsets.UTF_8), false, extraHeaders);
    }

    private static String reason(int status) {
        return switch (status) {
            case 200 -> "OK";
            case 400 -> "Bad Request";
            case 404 -> "Not Found";
            case 405 -> "Method Not Allowed";
            case 431 -> "Request Header Fields Too Large";
            case 500 -> "Internal Server Error";
            default -> throw new IllegalArgumentException("no reason phrase for status " + status);
        };
    }
}
