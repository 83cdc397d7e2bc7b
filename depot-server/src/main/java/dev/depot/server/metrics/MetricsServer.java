package dev.depot.server.metrics;

import io.prometheus.metrics.config.EscapingScheme;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.function.Supplier;

/**
 * Serves {@code GET /metrics} in the Prometheus text format (version 0.0.4) on one address: every scrape takes a
 * fresh {@link DepotMetrics#snapshot}. Any other path is a 404, any other method a 405.
 *
 * <p>A client that stalls costs its own connection only, for a bounded time ({@link Limits}):
 * <ul>
 *   <li>each connection is served on its own virtual thread, so one blocked read or write holds up no other;</li>
 *   <li>a connection answers one request and closes ({@code Connection: close}): requests pipelined behind the
 *       first are discarded unanswered (beyond {@value MetricsConnection#MAX_DISCARDED_BYTES} bytes the
 *       connection is reset), and no connection stays idle between scrapes;</li>
 *   <li>the request head must arrive within the read timeout; within the write timeout the client must take the
 *       reply and close its end (the server waits for that, so a reply left unread in the kernel's buffers still
 *       counts as an open connection); a deadline resets the connection, so nothing stays queued for a client
 *       that does not read;</li>
 *   <li>at most {@link Limits#maxConnections} connections are open: one more closes the oldest to make room. A
 *       scrape takes milliseconds, so the oldest connection is a stalled one (in any phase: not sending its
 *       request, not taking its reply); nothing waits in a queue, and stalled clients, however many, cannot keep
 *       a scraper out, as refusing connections beyond the limit would. Only a burst of more new connections
 *       than the limit within one scrape closes that scrape.</li>
 * </ul>
 *
 * <p>Why not the JDK's {@code com.sun.net.httpserver.HttpServer}: it reads requests on its executor's threads,
 * so with a bounded executor stalled requests still take every thread while further connections queue without
 * bound, and its only timeouts ({@code sun.net.httpserver.maxReqTime}, {@code maxRspTime}) are JVM-wide system
 * properties read once when its classes load, which another library in the process may have done first. One
 * request per connection over a plain {@link ServerSocket} needs none of its machinery, and virtual threads
 * make a thread per connection cheap, with the limit enforced where connections are accepted.
 *
 * <p>Lifecycle: {@link #start} binds and serves; {@link #close} stops accepting, closes every open connection and
 * frees the port.
 */
public final class MetricsServer implements AutoCloseable {
    /** Where the metrics are served. */
    public static final String PATH = "/metrics";
    private static final long ACCEPT_RETRY_MILLIS = 100;

    /**
     * How long a client may take and how many may be connected at once.
     *
     * @param readTimeout time from accepting a connection to the end of its request head
     * @param writeTimeout time from the end of the request head until the client has read the reply and closed
     *     its end
     * @param maxConnections connections open at once
     */
    public record Limits(Duration readTimeout, Duration writeTimeout, int maxConnections) {
        /** 5 s to send a request, 10 s (Prometheus' default scrape timeout) to take the reply, 16 connections. */
        public static final Limits DEFAULTS = new Limits(Duration.ofSeconds(5), Duration.ofSeconds(10), 16);

        public Limits {
            if (readTimeout.isNegative() || readTimeout.isZero() || writeTimeout.isNegative()
                || writeTimeout.isZero() || maxConnections < 1) {
                throw new IllegalArgumentException("metrics limits need positive timeouts and at least one "
                    + "connection: read " + readTimeout + ", write " + writeTimeout + ", " + maxConnections
                    + " connections");
            }
        }
    }

    private final ServerSocket listener;
    private final Limits limits;
    private final Supplier<byte[]> page;
    private final String contentType;
    /** Open connections in the order they were accepted; guarded by itself. */
    private final Set<MetricsConnection> open = new LinkedHashSet<>();
    private final ScheduledThreadPoolExecutor deadlines;
    private final Thread acceptor;
    private volatile boolean closed;

    private MetricsServer(ServerSocket listener, Limits limits, Supplier<byte[]> page, String contentType) {
        this.listener = listener;
        this.limits = limits;
        this.page = page;
        this.contentType = contentType;
        this.deadlines = new ScheduledThreadPoolExecutor(1,
            Thread.ofPlatform().daemon().name("depot-metrics-deadlines").factory());
        deadlines.setRemoveOnCancelPolicy(true);
        this.acceptor = Thread.ofPlatform().daemon().name("depot-metrics").start(this::acceptLoop);
    }

    /** {@link #start(InetSocketAddress, DepotMetrics.Source, Limits)} with {@link Limits#DEFAULTS}. */
    public static MetricsServer start(InetSocketAddress address, DepotMetrics.Source source) {
        return start(address, source, Limits.DEFAULTS);
    }

    /**
     * Binds {@code address} (port 0: any free port, see {@link #address}) and serves the metrics of
     * {@code source} within {@code limits}.
     *
     * @throws UncheckedIOException when the address cannot be bound (in use, not local)
     */
    public static MetricsServer start(InetSocketAddress address, DepotMetrics.Source source, Limits limits) {
        PrometheusTextFormatWriter writer = PrometheusTextFormatWriter.create();
        Object rendering = new Object();
        Supplier<byte[]> page = () -> {
            // one snapshot at a time: the writer and the sources are not made for concurrent scrapes
            synchronized (rendering) {
                ByteArrayOutputStream body = new ByteArrayOutputStream(8192);
                try {
                    writer.write(body, DepotMetrics.snapshot(source), EscapingScheme.UNDERSCORE_ESCAPING);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                return body.toByteArray();
            }
        };
        return start(address, limits, page, writer.getContentType());
    }

    /** Serves {@code page}, of {@code contentType}, at {@link #PATH}. */
    static MetricsServer start(InetSocketAddress address, Limits limits, Supplier<byte[]> page, String contentType) {
        ServerSocket listener = null;
        try {
            listener = new ServerSocket();
            listener.bind(address, 64);
            return new MetricsServer(listener, limits, page, contentType);
        } catch (IOException e) {
            try {
                if (listener != null) {
                    listener.close();
                }
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw new UncheckedIOException("cannot serve metrics on " + address.getHostString() + ":"
                + address.getPort() + ": " + e.getMessage() + "; choose another --metrics HOST:PORT", e);
        }
    }

    /** The bound address (with the actual port when 0 was asked for). */
    public InetSocketAddress address() {
        return (InetSocketAddress) listener.getLocalSocketAddress();
    }

    /** {@code http://HOST:PORT/metrics}. */
    public String url() {
        InetSocketAddress a = address();
        String host = a.getAddress().getHostAddress();
        return "http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + a.getPort() + PATH;
    }

    /** Connections open now: accepted, and neither answered nor closed yet. */
    public int openConnections() {
        synchronized (open) {
            return open.size();
        }
    }

    private void acceptLoop() {
        while (!closed) {
            Socket socket;
            try {
                socket = listener.accept();
            } catch (IOException e) {
                if (!closed && !pause()) {
                    return;
                }
                continue; // out of file descriptors, or an aborted handshake: try again
            }
            admit(socket);
        }
    }

    /** Serves {@code socket}, first closing the oldest connection when {@link Limits#maxConnections} are open. */
    private void admit(Socket socket) {
        MetricsConnection connection = new MetricsConnection(socket, limits, deadlines, this::answer, this::closed);
        MetricsConnection oldest = null;
        boolean serving;
        synchronized (open) {
            serving = !closed;
            if (serving) {
                if (open.size() >= limits.maxConnections()) {
                    oldest = open.iterator().next();
                    open.remove(oldest);
                }
                open.add(connection);
            }
        }
        if (oldest != null) {
            oldest.abort();
        }
        if (serving) {
            Thread.ofVirtual().name("depot-metrics-connection").start(connection::serve);
        } else {
            connection.abort();
        }
    }

    private void closed(MetricsConnection connection) {
        synchronized (open) {
            open.remove(connection);
        }
    }

    private byte[] answer(RequestHead request) {
        if (!request.path().equals(PATH)) {
            return HttpReply.text(404, "not found; metrics are at " + PATH, "");
        }
        boolean head = request.method().equals("HEAD");
        if (!head && !request.method().equals("GET")) {
            return HttpReply.text(405, "only GET and HEAD", "Allow: GET, HEAD\r\n");
        }
        try {
            return HttpReply.of(200, contentType, page.get(), head, "");
        } catch (RuntimeException e) {
            return HttpReply.text(500, "the metrics could not be read: " + e, "");
        }
    }

    /** Waits before accepting again; false when interrupted (the server is closing). */
    private static boolean pause() {
        try {
            Thread.sleep(ACCEPT_RETRY_MILLIS);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    @Override
    public void close() {
        closed = true;
        try {
            listener.close();
        } catch (IOException e) {
            // the listener is closed either way
        }
        try {
            acceptor.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        List<MetricsConnection> connections;
        synchronized (open) {
            connections = new ArrayList<>(open);
        }
        connections.forEach(MetricsConnection::abort);
        deadlines.shutdownNow();
    }
}
