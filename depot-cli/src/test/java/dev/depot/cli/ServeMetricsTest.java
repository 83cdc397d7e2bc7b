package dev.depot.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.client.testing.ChildJvm;
import dev.depot.client.testing.TempStore;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code depot serve --metrics}: Prometheus text over HTTP, with the figures {@code depot stat --json} shows. */
class ServeMetricsTest {
    /** Metric name to the {@code stat --json} key with the same figure. */
    private static final Map<String, String> SAME_AS_STAT = Map.ofEntries(
        Map.entry("depot_capacity_bytes", "capacity_bytes"),
        Map.entry("depot_used_bytes", "used_bytes"),
        Map.entry("depot_free_bytes", "free_bytes"),
        Map.entry("depot_pinned_bytes", "pinned_bytes"),
        Map.entry("depot_unsealed_bytes", "unsealed_bytes"),
        Map.entry("depot_largest_free_block_bytes", "largest_free_block"),
        Map.entry("depot_objects", "object_count"),
        Map.entry("depot_sealed_objects", "sealed_count"),
        Map.entry("depot_max_objects", "max_objects"),
        Map.entry("depot_evictions_total", "eviction_count"),
        Map.entry("depot_evicted_bytes_total", "evicted_bytes"));

    @Test
    void shouldServeTheFiguresThatStatJsonPrints() throws Exception {
        int port = freePort();
        try (TempStore temp = new TempStore();
             ChildJvm daemon = ChildJvm.start(Main.class, "serve", "--dir", temp.dir().toString(),
                 "--capacity", "256k", "--metrics", "127.0.0.1:" + port);
             HttpClient http = HttpClient.newHttpClient()) {
            daemon.awaitLine("depot: serving ", 60);
            CliRunner depot = new CliRunner(temp.dir());
            for (int i = 0; i < 6; i++) {  // 6 x 64 KiB in 256 KiB: some are evicted
                CliRunner.Result put = depot.runWithInput(new byte[64 << 10], "put", "--name", "o" + i);
                assertEquals(0, put.status(), put::toString);
            }
            Map<String, Object> stat = JsonText.parseObject(depot.run("stat", "--json").stdout());
            Map<String, Double> metrics = scrape(http, "http://127.0.0.1:" + port + "/metrics");
            assertTrue((Long) stat.get("eviction_count") > 0, stat::toString);
            SAME_AS_STAT.forEach((metric, key) ->
                assertEquals(((Long) stat.get(key)).doubleValue(), metrics.get(metric), metric + " vs " + key));
            // stat --json counts its own client; the scrape happens after it closed
            assertEquals(((Long) stat.get("client_count")).doubleValue() - 1, metrics.get("depot_clients"));
            assertEquals((Double) stat.get("fragmentation"), metrics.get("depot_fragmentation_ratio"), 1e-9);

            assertTrue(ProcessHandle.of(daemon.pid()).orElseThrow().destroy(), "SIGTERM not sent");
            assertEquals(0, daemon.waitFor(60));
            assertThrows(IOException.class, () -> scrape(http, "http://127.0.0.1:" + port + "/metrics"),
                "the port is closed with the daemon");
        }
    }

    @Test
    void shouldTakeLoopbackWhenOnlyAPortIsGivenAndRejectBadValues() {
        assertEquals(new InetSocketAddress(InetAddress.getLoopbackAddress(), 9464), MetricsAddress.parse("9464"));
        assertEquals(new InetSocketAddress(InetAddress.getLoopbackAddress(), 9464), MetricsAddress.parse(":9464"));
        assertEquals(9464, MetricsAddress.parse("[::1]:9464").getPort());
        assertTrue(MetricsAddress.parse("0.0.0.0:0").getAddress().isAnyLocalAddress());
        for (String bad : new String[] {"", "127.0.0.1", "127.0.0.1:65536", "127.0.0.1:-1", "host:port"}) {
            assertThrows(UsageException.class, () -> MetricsAddress.parse(bad), bad);
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static Map<String, Double> scrape(HttpClient http, String url) throws IOException, InterruptedException {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url)).build(),
            HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        assertEquals(200, r.statusCode(), r::body);
        Map<String, Double> samples = new HashMap<>();
        r.body().lines().filter(l -> !l.isBlank() && !l.startsWith("#")).forEach(l -> {
            int space = l.lastIndexOf(' ');
            samples.put(l.substring(0, space), Double.parseDouble(l.substring(space + 1)));
        });
        return samples;
    }
}
