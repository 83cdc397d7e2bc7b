package dev.depot.server.metrics;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.prometheus.metrics.config.EscapingScheme;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Serves {@code GET /metrics} in the Prometheus text format (version 0.0.4) on one address, with the JDK's
 * {@link HttpServer} on one daemon thread: every scrape takes a fresh {@link DepotMetrics#snapshot}. Any other
 * path is a 404, any other method a 405.
 *
 * <p>Lifecycle: {@link #start} binds and serves; {@link #close} stops serving and frees the port.
 */
public final class MetricsServer implements AutoCloseable {
    /** Where the metrics are served. */
    public static final String PATH = "/metrics";

    private final HttpServer http;
    private final ExecutorService thread;
    private final PrometheusTextFormatWriter writer = PrometheusTextFormatWriter.create();
    private final DepotMetrics.Source source;

    private MetricsServer(HttpServer http, DepotMetrics.Source source) {
        this.http = http;
        this.source = source;
        this.thread = Executors.newSingleThreadExecutor(Thread.ofPlatform().daemon().name("depot-metrics").factory());
        http.createContext("/", this::handle);
        http.setExecutor(thread);
        http.start();
    }

    /**
     * Binds {@code address} (port 0: any free port, see {@link #address}) and serves the metrics of
     * {@code source}.
     *
     * @throws UncheckedIOException when the address cannot be bound (in use, not local)
     */
    public static MetricsServer start(InetSocketAddress address, DepotMetrics.Source source) {
        try {
            return new MetricsServer(HttpServer.create(address, 0), source);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot serve metrics on " + address.getHostString() + ":"
                + address.getPort() + ": " + e.getMessage() + "; choose another --metrics HOST:PORT", e);
        }
    }

    /** The bound address (with the actual port when 0 was asked for). */
    public InetSocketAddress address() {
        return http.getAddress();
    }

    /** {@code http://HOST:PORT/metrics}. */
    public String url() {
        InetSocketAddress a = address();
        String host = a.getAddress().getHostAddress();
        return "http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + a.getPort() + PATH;
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            if (!exchange.getRequestURI().getPath().equals(PATH)) {
                reply(exchange, 404, "text/plain; charset=utf-8", "not found; metrics are at " + PATH + "\n");
            } else if (!exchange.getRequestMethod().equals("GET") && !exchange.getRequestMethod().equals("HEAD")) {
                exchange.getResponseHeaders().set("Allow", "GET, HEAD");
                reply(exchange, 405, "text/plain; charset=utf-8", "only GET and HEAD\n");
            } else {
                ByteArrayOutputStream body = new ByteArrayOutputStream(4096);
                writer.write(body, DepotMetrics.snapshot(source), EscapingScheme.UNDERSCORE_ESCAPING);
                exchange.getResponseHeaders().set("Content-Type", writer.getContentType());
                boolean head = exchange.getRequestMethod().equals("HEAD");
                exchange.sendResponseHeaders(200, head ? -1 : body.size());
                if (!head) {
                    body.writeTo(exchange.getResponseBody());
                }
            }
        } catch (RuntimeException e) {
            exchange.sendResponseHeaders(500, -1);
        }
    }

    private static void reply(HttpExchange exchange, int status, String type, String text) throws IOException {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", type);
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    @Override
    public void close() {
        http.stop(0);
        thread.shutdownNow();
    }
}
