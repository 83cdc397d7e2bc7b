package dev.depot.server.metrics;

import java.io.BufferedInputStream;
import java.io.IOException;
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
 * read timeout, writes one reply, which the client must take within the write timeout, and closes. A deadline
 * that passes closes the socket from the deadline thread, which ends the blocked read or write at once; nothing
 * else ends a blocking socket write.
 *
 * <p>Lifecycle: {@link #serve} runs once; {@link #close} may be called from any thread, any number of times (a
 * deadline, the server making room, the server closing); {@code onClosed} runs once when {@link #serve} returns.
 */
final class MetricsConnection {
    private final Socket socket;
    private final MetricsServer.Limits limits;
    private final ScheduledExecutorService deadlines;
    private final Function<RequestHead, byte[]> answer;
    private final Consumer<MetricsConnection> onClosed;
    /** Set once the request head is read: from then on the server does not pick this connection to close. */
    private volatile boolean replying;

    MetricsConnection(Socket socket, MetricsServer.Limits limits, ScheduledExecutorService deadlines,
                      Function<RequestHead, byte[]> answer, Consumer<MetricsConnection> onClosed) {
        this.socket = socket;
        this.limits = limits;
        this.deadlines = deadlines;
        this.answer = answer;
        this.onClosed = onClosed;
    }

    /** Whether the request head is still being read: a client that stalls here holds nothing but this socket. */
    boolean readingRequest() {
        return !replying;
    }

    void serve() {
        ScheduledFuture<?> deadline = null;
        try (socket) {
            deadline = closeAfter(limits.readTimeout().toNanos());
            byte[] reply;
            try {
                reply = answer.apply(RequestHead.read(new BufferedInputStream(socket.getInputStream(), 1024)));
            } catch (RequestHead.Malformed e) {
                reply = HttpReply.text(e.status(), e.getMessage(), "");
            }
            replying = true;
            deadline.cancel(false);
            deadline = closeAfter(limits.writeTimeout().toNanos());
            OutputStream out = socket.getOutputStream();
            out.write(reply);
            out.flush();
        } catch (IOException | RejectedExecutionException e) {
            // the client closed, a deadline or the server closed the socket, or the server is closing
        } finally {
            if (deadline != null) {
                deadline.cancel(false);
            }
            onClosed.accept(this);
        }
    }

    private ScheduledFuture<?> closeAfter(long nanos) {
        return deadlines.schedule(this::close, nanos, TimeUnit.NANOSECONDS);
    }

    /** Closes the socket; a read or write blocked on it ends with an exception. */
    void close() {
        try {
            socket.close();
        } catch (IOException e) {
            // closing a TCP socket reports nothing a caller could act on
        }
    }
}
