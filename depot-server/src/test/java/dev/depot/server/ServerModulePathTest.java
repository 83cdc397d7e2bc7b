package dev.depot.server;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.depot.client.DepotClient;
import dev.depot.client.testing.ModularProgram;
import dev.depot.client.testing.TempStore;
import dev.depot.core.store.Store;
import io.prometheus.metrics.config.EscapingScheme;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code dev.depot.server} as a JPMS module: an application module that {@code requires dev.depot.server} embeds
 * the daemon on the module path and puts and gets through the client it returns, so the daemon's module
 * descriptor names all it needs and its clients over its own store work across the client module's boundary.
 */
class ServerModulePathTest {
    private static final String MODULE_INFO = """
        module example {
            requires dev.depot.server;
        }
        """;
    private static final String MAIN = """
        package example;

        import dev.depot.client.DepotClient;
        import dev.depot.client.ObjectId;
        import dev.depot.client.ObjectView;
        import dev.depot.server.DepotServer;
        import java.nio.file.Path;

        public class Main {
            public static void main(String[] args) {
                try (DepotClient depot = DepotServer.embedded(Path.of(args[0]), 1 << 20)) {
                    depot.put(ObjectId.of("module-path"), new byte[] {1, 2, 3});
                    try (ObjectView v = depot.get(ObjectId.of("module-path"), 1000)) {
                        System.out.println("size " + v.size());
                    }
                }
            }
        }
        """;

    @Test
    void applicationOnTheModulePathShouldEmbedTheDaemon(@TempDir Path work) throws Exception {
        ModularProgram program = new ModularProgram(work, DepotServer.class, DepotClient.class, Store.class,
                PrometheusTextFormatWriter.class, MetricSnapshots.class, EscapingScheme.class)
            .source("module-info.java", MODULE_INFO).source("example/Main.java", MAIN);
        assertEquals("", program.compile("out", "module-info.java", "example/Main.java"));

        try (TempStore temp = new TempStore()) {
            String text = program.run("out", "example/example.Main", temp.dir().toString());
            assertEquals(List.of("size 3"), text.lines().toList());
        }
    }
}
