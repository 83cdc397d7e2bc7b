package dev.depot.server.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.client.testing.Eventually;
import dev.depot.client.testing.TempStore;
import dev.depot.server.DepotServer;
import dev.depot.server.ServerConfig;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code /metrics} with clients that stall: a request line that never ends (slowloris), requests pipelined by a
 * client that never reads the answers. A good scraper beside them is served, and the stalled connections are
 * closed after the timeouts. Real sockets; the bounds are deadlines for a hang, never timing assertions.
 */
class MetricsServerSlowClientTest {
    /** How long a good scrape may take before the test calls it blocked: far beyond any sound machine's. */
    private static final Duration SCRAPE_BOUND = Duration.ofSeconds(30);
    private static final int BOUND_MILLIS = (int) SCRAPE_BOUND.toMillis();
    private static final Duration LONG = Duration.ofMinutes(10);
    private static final Duration SHORT = Duration.ofMillis(200);

    private TempStore temp;
    private DepotServer server;
    private final HttpClient http = HttpClient.newHttpClient();

    @BeforeEach
    void startDaemon() {
        temp = new TempStore();
        server = DepotServer.start(ServerConfig.defaults().withDirectory(temp.dir()).withCapacity(4L << 20), msg -> { });
    }

    @AfterEach
    void stopDaemon() {
        try {
            server.close();
        } finally {
            temp.close();
            http.close();
        }
    }

    private MetricsServer metrics(Duration readTimeout, Duration writeTimeout, int maxConnections) {
        return MetricsServer.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
            server.metricsSource(), new MetricsServer.Limits(readTimeout, writeTimeout, maxConnections));
    }

    @Test
    void shouldServeAScraperWhileASlowlorisAndAPipelinerThatNeverReadsHoldTheirConnections() throws Exception {
        try (MetricsServer metrics = metrics(LONG, LONG, MetricsServer.Limits.DEFAULTS.maxConnections());
             Socket slowloris = slowloris(metrics);
             Pipeliner pipeliner = Pipeliner.start(metrics)) {
            for (int i = 0; i < 3; i++) {
                assertScrapes(metrics);
            }
        }
    }

    @Test
    void shouldCloseARequestThatStallsBeyondTheReadTimeout() throws Exception {
        try (MetricsServer metrics = metrics(SHORT, LONG, MetricsServer.Limits.DEFAULTS.maxConnections());
             Socket slowloris = slowloris(metrics)) {
            assertClosedByServer(slowloris, "a request line that stalls after `GET /met`");
        }
    }

    @Test
    void shouldCloseTheConnectionOfAPipelinerThatNeverReads() throws Exception {
        try (MetricsServer metrics = metrics(LONG, SHORT, MetricsServer.Limits.DEFAULTS.maxConnections());
             Pipeliner pipeliner = Pipeliner.start(metrics)) {
            assertScrapes(metrics);
            assertClosedByServer(pipeliner.socket, "a connection with pipelined requests whose answers are not read");
        }
    }

    @Test
    void shouldCloseAConnectionThatDoesNotReadItsResponseWithinTheWriteTimeout() throws Exception {
        try (MetricsServer metrics = bigPage(new MetricsServer.Limits(LONG, SHORT, 4));
             Socket reader = nonReader(metrics)) {
            // accepted first: until then no connection is open either
            Eventually.await("the server accepting the connection", () -> metrics.openConnections() == 1);
            Eventually.await("the server giving up the response nobody reads",
                () -> metrics.openConnections() == 0);
            long received = drain(reader, "the response not read within the write timeout");
            assertTrue(received < BIG_PAGE, received + " bytes of a " + BIG_PAGE + "-byte response arrived, so the "
                + "server wrote it all to a client that did not read");
        }
    }

    @Test
    void shouldServeANewConnectionWhenTheLimitIsHeldByClientsThatDoNotRead() throws Exception {
        try (MetricsServer metrics = bigPage(new MetricsServer.Limits(LONG, LONG, 2));
             Socket oldest = nonReader(metrics)) {
            Eventually.await("the first non-reader accepted", () -> metrics.openConnections() == 1);
            try (Socket newer = nonReader(metrics); Socket scraper = new Socket()) {
                Eventually.await("the second non-reader accepted", () -> metrics.openConnections() == 2);
                scraper.connect(metrics.address());
                scraper.getOutputStream().write(request("GET"));
                scraper.getOutputStream().flush();
                long received = drain(scraper, "a reply being read");
                assertTrue(received > BIG_PAGE, "the scraper got " + received + " bytes of a " + BIG_PAGE
                    + "-byte page");
                long first = drain(oldest, "the oldest connection, beyond the limit of 2");
                assertTrue(first < BIG_PAGE, "the oldest connection was not closed to make room: all "
                    + first + " bytes of the page arrived");
            }
        }
    }

    @Test
    void shouldCloseTheOldestConnectionToServeANewOneBeyondTheLimit() throws Exception {
        try (MetricsServer metrics = metrics(LONG, LONG, 2);
             Socket oldest = slowloris(metrics)) {
            Eventually.await("the first slow connection accepted",
                () -> metrics.openConnections() == 1);
            try (Socket newer = slowloris(metrics)) {
                Eventually.await("the second slow connection accepted",
                    () -> metrics.openConnections() == 2);
                assertScrapes(metrics);
                assertClosedByServer(oldest, "the oldest connection, beyond the limit of 2");
                newer.getOutputStream().write("rics HTTP/1.1\r\nHost: depot\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                newer.getOutputStream().flush();
                newer.setSoTimeout(BOUND_MILLIS);
                String answer = new String(newer.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
                assertTrue(answer.startsWith("HTTP/1.1 200 "), answer);
                assertTrue(answer.contains("depot_capacity_bytes"), answer);
            }
        }
    }

    private static final int BIG_PAGE = 16 << 20;

    /** A server whose page is {@link #BIG_PAGE} bytes, more than the socket buffers of a loopback connection hold. */
    private static MetricsServer bigPage(MetricsServer.Limits limits) {
        byte[] page = new byte[BIG_PAGE];
        return MetricsServer.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), limits, () -> page,
            "application/octet-stream");
    }

    /** A connection that sent a whole request, with a small receive buffer, and does not read. */
    private static Socket nonReader(MetricsServer metrics) throws IOException {
        Socket s = new Socket();
        s.setReceiveBufferSize(4096);
        s.connect(metrics.address());
        s.getOutputStream().write(request("GET"));
        s.getOutputStream().flush();
        return s;
    }

    /** A connection that sent {@code GET /met} and then nothing. */
    private static Socket slowloris(MetricsServer metrics) throws IOException {
        Socket s = new Socket();
        s.connect(metrics.address());
        s.getOutputStream().write("GET /met".getBytes(StandardCharsets.US_ASCII));
        s.getOutputStream().flush();
        return s;
    }

    private static byte[] request(String method) {
        return (method + " /metrics HTTP/1.1\r\nHost: depot\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
    }

    /** A client that writes requests, many at a time, on its own thread, and never reads an answer. */
    private static final class Pipeliner implements AutoCloseable {
        private static final int REQUESTS = 100_000;
        final Socket socket = new Socket();
        private final Thread writer;

        private Pipeliner(MetricsServer metrics) throws IOException {
            socket.setReceiveBufferSize(4096);
            socket.connect(metrics.address());
            byte[] one = request("GET");
            writer = Thread.ofPlatform().daemon().name("pipeliner").start(() -> {
                try {
                    for (int i = 0; i < REQUESTS; i++) {
                        socket.getOutputStream().write(one);
                    }
                } catch (IOException e) {
                    // the server closed the connection, or the test did
                }
            });
        }

        static Pipeliner start(MetricsServer metrics) throws IOException {
            return new Pipeliner(metrics);
        }

        @Override
        public void close() throws Exception {
            socket.close();
            writer.join();
        }
    }

    /** Scrapes once; fails when the answer does not come within {@link #SCRAPE_BOUND}. */
    private void assertScrapes(MetricsServer metrics) throws IOException, InterruptedException {
        HttpResponse<String> r;
        try {
            r = http.send(HttpRequest.newBuilder(URI.create(metrics.url())).timeout(SCRAPE_BOUND).build(),
                HttpResponse.BodyHandlers.ofString());
        } catch (HttpTimeoutException e) {
            throw new AssertionError("a good scrape got no answer within " + SCRAPE_BOUND + " beside stalled clients", e);
        }
        assertEquals(200, r.statusCode(), r::body);
        assertTrue(r.body().contains("depot_capacity_bytes"), r::body);
    }

    /** Reads until the server closes (end of stream or reset); fails when it is still open after the bound. */
    private static void assertClosedByServer(Socket s, String what) throws IOException {
        drain(s, what);
    }

    private static long drain(Socket s, String what) throws IOException {
        s.setSoTimeout(BOUND_MILLIS);
        InputStream in = s.getInputStream();
        byte[] buffer = new byte[64 << 10];
        long total = 0;
        try {
            for (int n; (n = in.read(buffer)) >= 0; ) {
                total += n;
            }
        } catch (SocketTimeoutException e) {
            throw new AssertionError("the server kept " + what + " open for " + SCRAPE_BOUND + " more", e);
        } catch (SocketException reset) {
            // closed by the server with unread input: a reset instead of an end of stream
        }
        return total;
    }
}
