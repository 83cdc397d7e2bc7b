package dev.depot.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.client.DepotClient;
import dev.depot.client.testing.TempStore;
import dev.depot.core.store.Store;
import io.prometheus.metrics.config.EscapingScheme;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.io.File;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
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
        String modulePath = Stream.of(DepotServer.class, DepotClient.class, Store.class, PrometheusTextFormatWriter.class,
                MetricSnapshots.class, EscapingScheme.class)
            .map(ServerModulePathTest::location).distinct().collect(Collectors.joining(File.pathSeparator));
        Path src = work.resolve("src");
        Files.createDirectories(src.resolve("example"));
        Files.writeString(src.resolve("module-info.java"), MODULE_INFO);
        Files.writeString(src.resolve("example/Main.java"), MAIN);
        Path out = work.resolve("out");
        assertEquals("", run(List.of(tool("javac"), "--module-path", modulePath, "-d", out.toString(),
            src.resolve("module-info.java").toString(), src.resolve("example/Main.java").toString()), 0));

        try (TempStore temp = new TempStore()) {
            String text = run(List.of(tool("java"), "--enable-native-access=dev.depot.core", "-Xmx64m",
                "--module-path", modulePath + File.pathSeparator + out, "-m", "example/example.Main",
                temp.dir().toString()), 0);
            assertEquals(List.of("size 3"), text.lines().toList());
        }
    }

    /** Runs {@code cmd}; returns its output, checking that it exited with {@code status}. */
    private static String run(List<String> cmd, int status) throws Exception {
        Process p = new ProcessBuilder(new ArrayList<>(cmd)).redirectErrorStream(true).start();
        try {
            String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(60, TimeUnit.SECONDS), cmd.getFirst() + " did not finish within 60 s");
            assertEquals(status, p.exitValue(), text);
            return text;
        } finally {
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static String tool(String name) {
        return Path.of(System.getProperty("java.home"), "bin", name).toString();
    }

    private static String location(Class<?> c) {
        try {
            return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
