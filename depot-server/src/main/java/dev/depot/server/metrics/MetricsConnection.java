package dev.depot.server.metrics;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * One accepted connection, served on its own thread: it reads one request head, which must arrive within the
 * read timeout, writes one reply, which the client must take (and then close the connection) within the write
 * timeout, and closes. A deadline that passes aborts the connection from the deadline thread, which ends the
 * blocked read or write at once; nothing else ends a blocking socket write.
 *
 * <p>Lifecycle: {@link #serve} runs once and closes the socket gracefully when it has answered; {@link #abort}
 * may be called from any thread, any number of times (a deadline, the server making room, the server closing);
 * {@code onClosed} runs once when {@link #serve} returns.
 */
final class MetricsConnection {
    /** Bytes a client may send after its request before the connection is aborted. */
    static final int MAX_DISCARDED_BYTES = 64 << 10;

    private final Socket socket;
    private final MetricsServer.Limits limits;
    private final ScheduledExecutorService deadlines;
    private final Function<RequestHead, byte[]> answer;
    private final Consumer<MetricsConnection> onClosed;

    MetricsConnection(Socket socket, MetricsServer.Limits limits, ScheduledExecutorService deadlines,
                      Function<RequestHead, byte[]> answer, Consumer<MetricsConnection> onClosed) {
        this.socket = socket;
        this.limits = limits;
        this.deadlines = deadlines;
        this.answer = answer;
        this.onClosed = onClosed;
    }

    void serve() {
        ScheduledFuture<?> deadline = null;
        try (socket) {
            deadline = closeAfter(limits.readTimeout().toNanos());
            InputStream in = new BufferedInputStream(socket.getInputStream(), 1024);
            byte[] reply;
            try {
                reply = answer.apply(RequestHead.read(in));
            } catch (RequestHead.Malformed e) {
                reply = HttpReply.text(e.status(), e.getMessage(), "");
            }
            deadline.cancel(false);
            deadline = closeAfter(limits.writeTimeout().toNanos());
            OutputStream out = socket.getOutputStream();
            out.write(reply);
            out.flush();
            awaitClientClose(in);
        } catch (IOException | RejectedExecutionException e) {
            // the client closed, a deadline or the server closed the socket, or the server is closing
        } finally {
            if (deadline != null) {
                deadline.cancel(false);
            }
            onClosed.accept(this);
        }
    }

    /**
     * Sends the end of the stream after the reply, then waits, within the write deadline, for the client to close
     * its side once it has read the reply. Until then the reply may sit unread in the kernel's buffers, so the
     * connection counts as open; a client that neither reads nor closes is aborted by the deadline. What the
     * client still sends (pipelined requests) is discarded, up to {@link #MAX_DISCARDED_BYTES}.
     */
    private void awaitClientClose(InputStream in) throws IOException {
        socket.shutdownOutput();
        byte[] discard = new byte[1024];
        long discarded = 0;
        for (int n; (n = in.read(discard)) >= 0; ) {
            discarded += n;
            if (discarded > MAX_DISCARDED_BYTES) {
                abort();
                return;
            }
        }
    }

    private ScheduledFuture<?> closeAfter(long nanos) {
        return deadlines.schedule(this::abort, nanos, TimeUnit.NANOSECONDS);
    }

    /**
     * Closes the socket with a reset, dropping what the client has not taken: a blocked read or write ends with
     * an exception, and no unsent reply stays queued in the kernel for a client that does not read (a graceful
     * close would keep it there, and the client would never see the end of the stream behind it).
     */
    void abort() {
        try {
            socket.setSoLinger(true, 0);
        } catch (IOException e) {
            // already closed
        }
        try {
            socket.close();
        } catch (IOException e) {
            // closing a TCP socket reports nothing a caller could act on
        }
    }
}
