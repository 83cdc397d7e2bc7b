package dev.depot.server.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectView;
import dev.depot.client.StoreStats;
import dev.depot.client.testing.TempStore;
import dev.depot.server.DepotServer;
import dev.depot.server.ServerConfig;
import dev.depot.server.metrics.MetricsServer;
import dev.depot.client.testing.Eventually;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@code /metrics} over HTTP from a running daemon: store figures, sessions, requests and errors by type. */
class MetricsEndpointTest {
    private static final long CAPACITY = 4L << 20;

    private TempStore temp;
    private DepotServer server;
    private MetricsServer metrics;
    private final HttpClient http = HttpClient.newHttpClient();

    @BeforeEach
    void startDaemon() {
        temp = new TempStore();
        server = DepotServer.start(ServerConfig.defaults().withDirectory(temp.dir()).withCapacity(CAPACITY), msg -> { });
        metrics = MetricsServer.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
            server.metricsSource());
    }

    @AfterEach
    void stopDaemon() {
        try {
            if (metrics != null) {
                metrics.close();
            }
            if (server != null) {
                server.close();
            }
        } finally {
            temp.close();
            http.close();
        }
    }

    @Test
    void shouldServeTheStoreFiguresThatStatsReports() throws Exception {
        DepotClient local = server.client();
        local.put(ObjectId.of("a"), new byte[1000]);
        local.put(ObjectId.of("b"), new byte[3000]);
        try (ObjectView pinned = local.get(ObjectId.of("b"), 0)) {
            Map<String, Double> m = scrape();
            StoreStats s = local.stats();
            assertEquals((double) s.capacityBytes(), sample(m, "depot_capacity_bytes"));
            assertEquals((double) s.usedBytes(), sample(m, "depot_used_bytes"));
            assertEquals((double) s.freeBytes(), sample(m, "depot_free_bytes"));
            assertEquals(3000.0, sample(m, "depot_pinned_bytes"));
            assertEquals(0.0, sample(m, "depot_unsealed_bytes"));
            assertEquals((double) s.largestFreeBlock(), sample(m, "depot_largest_free_block_bytes"));
            assertEquals(2.0, sample(m, "depot_objects"));
            assertEquals(2.0, sample(m, "depot_sealed_objects"));
            assertEquals((double) s.maxObjects(), sample(m, "depot_max_objects"));
            assertEquals((double) s.clientCount(), sample(m, "depot_clients"));
            assertEquals(0.0, sample(m, "depot_evictions_total"));
            assertEquals(0.0, sample(m, "depot_evicted_bytes_total"));
            assertEquals(0.0, sample(m, "depot_sessions"));
        }
    }

    @Test
    void shouldCountRequestsErrorsSessionsAndSealWaitsByType() throws Exception {
        ObjectId id = ObjectId.of("later");
        try (ProtocolTestClient c = ProtocolTestClient.open(temp.dir())) {
            assertThrows(ProtocolTestClient.RemoteError.class, () -> c.get(ObjectId.of("missing"), 0));
            CompletableFuture<ProtocolTestClient.Location> waiting = CompletableFuture.supplyAsync(() -> {
                try {
                    return c.get(id, 30_000);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            Eventually.await("the GET waiting for the seal",
                () -> scrape().getOrDefault("depot_seal_waits_total", 0.0) >= 1);
            server.client().put(id, new byte[10]);
            waiting.get();
            c.release(id, waiting.get());
            Map<String, Double> m = scrape();
            assertEquals(1.0, sample(m, "depot_sessions"));
            assertEquals(1.0, sample(m, "depot_sessions_opened_total"));
            assertEquals(1.0, sample(m, "depot_requests_total{type=\"hello\"}"));
            assertEquals(2.0, sample(m, "depot_requests_total{type=\"get\"}"));
            assertEquals(1.0, sample(m, "depot_requests_total{type=\"release\"}"));
            assertEquals(1.0, sample(m, "depot_request_errors_total{code=\"object_missing\",type=\"get\"}"));
            assertEquals(1.0, sample(m, "depot_seal_waits_total"));
            assertEquals(1.0, sample(m, "depot_seal_wakeups_total"));
        }
    }

    /** {@code DIR N}: puts, gets and deletes N objects in its own process, prints {@code done}, then hangs. */
    static final class InProcessOperations {
        public static void main(String[] a) throws InterruptedException {
            DepotClient depot = DepotClient.open(java.nio.file.Path.of(a[0]));
            for (int i = 0; i < Integer.parseInt(a[1]); i++) {
                ObjectId id = ObjectId.of("ops-" + i);
                depot.put(id, new byte[64]);
                depot.get(id, 0).close();
                depot.delete(id);
            }
            System.out.println("done");
            System.out.flush();
            Thread.sleep(Long.MAX_VALUE);
        }
    }

    @Test
    void shouldCountTheInProcessOperationsOfAJavaClientInAnotherJvmAndKeepThemAfterItDies() throws Exception {
        int n = 25;
        Map<String, Double> before = scrape();
        try (var child = dev.depot.client.testing.ChildJvm.start(InProcessOperations.class, temp.dir().toString(),
            String.valueOf(n))) {
            child.awaitLine("done", 60);
            assertCountedAtLeast(before, scrape(), n);
            child.kill();
        }
        Eventually.await("the reaper freeing the killed client's slot",
            () -> server.client().stats().clientCount() <= 1);
        assertCountedAtLeast(before, scrape(), n);
    }

    private static void assertCountedAtLeast(Map<String, Double> before, Map<String, Double> after, int n) {
        for (String name : new String[] {"depot_creates_total", "depot_gets_total", "depot_deletes_total"}) {
            assertTrue(sample(after, name) - sample(before, name) >= n, name + ": " + sample(before, name) + " before, "
                + sample(after, name) + " after " + n + " operations");
        }
    }

    @Test
    void shouldAnswerOtherPathsWith404() throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(metrics.url().replace("/metrics", "/x")))
            .build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(404, r.statusCode());
        assertTrue(metrics.url().startsWith("http://127.0.0.1:"), metrics.url());
    }

    private static double sample(Map<String, Double> samples, String name) {
        Double v = samples.get(name);
        if (v == null) {
            throw new AssertionError("no sample " + name + " in " + samples.keySet());
        }
        return v;
    }

    /** The samples of one scrape: {@code name{labels}} to value; checks the content type on the way. */
    private Map<String, Double> scrape() throws IOException, InterruptedException {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(metrics.url())).build(),
            HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), r::body);
        assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("text/plain; version=0.0.4"),
            r.headers()::toString);
        Map<String, Double> samples = new LinkedHashMap<>();
        for (String line : r.body().lines().toList()) {
            if (!line.isBlank() && !line.startsWith("#")) {
                int space = line.lastIndexOf(' ');
                samples.put(line.substring(0, space), Double.parseDouble(line.substring(space + 1)));
            }
        }
        return samples;
    }
}
