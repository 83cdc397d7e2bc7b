package dev.depot.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.client.testing.TempStore;
import dev.depot.core.store.Store;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code dev.depot.client} as a JPMS module: a small program module that {@code requires dev.depot.client}
 * compiles and runs on the module path (put, get, and an exception from {@code dev.depot.errors}), while one
 * that uses the store's internals, or the client's package for the daemon and tools, does not compile.
 */
class ModulePathTest {
    private static final String MODULE_INFO = """
        module example {
            requires dev.depot.client;
        }
        """;
    private static final String MAIN = """
        package example;

        import dev.depot.client.DepotClient;
        import dev.depot.client.ObjectId;
        import dev.depot.client.ObjectView;
        import dev.depot.errors.StoreNotFoundException;
        import java.nio.file.Path;

        public class Main {
            public static void main(String[] args) {
                try (DepotClient depot = DepotClient.open(Path.of(args[0]))) {
                    depot.put(ObjectId.of("module-path"), new byte[] {1, 2, 3});
                    try (ObjectView v = depot.get(ObjectId.of("module-path"), 1000)) {
                        System.out.println("size " + v.data().byteSize());
                    }
                }
                try {
                    DepotClient.open(Path.of(args[0], "nothing-here")).close();
                } catch (StoreNotFoundException e) {
                    System.out.println("no store: " + e.getClass().getSimpleName());
                }
                System.out.println("internals visible: " + DepotClient.class.getModule().getLayer()
                    .findModule("dev.depot.core").orElseThrow().isExported("dev.depot.core.store"));
            }
        }
        """;
    private static final String SNEAKY = """
        package example;

        public class Sneaky {
            dev.depot.core.store.Store store;
            dev.depot.client.internal.StoreClients clients;
        }
        """;

    @Test
    void programOnTheModulePathShouldUseTheApiButNotTheInternals(@TempDir Path work) throws Exception {
        String modulePath = location(DepotClient.class) + java.io.File.pathSeparator + location(Store.class);
        Path src = work.resolve("src");
        Files.createDirectories(src.resolve("example"));
        Files.writeString(src.resolve("module-info.java"), MODULE_INFO);
        Files.writeString(src.resolve("example/Main.java"), MAIN);
        Path out = work.resolve("out");
        assertEquals("", javac(modulePath, out, src.resolve("module-info.java"), src.resolve("example/Main.java")));

        try (TempStore temp = new TempStore()) {
            temp.create(1 << 20).close();
            List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=dev.depot.core", "-Xmx64m",
                "--module-path", modulePath + java.io.File.pathSeparator + out, "-m", "example/example.Main",
                temp.dir().toString()));
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            try {
                assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the program did not finish within 60 s");
                String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                assertEquals(0, p.exitValue(), text);
                assertEquals(List.of("size 3", "no store: StoreNotFoundException", "internals visible: false"),
                    text.lines().toList());
            } finally {
                p.destroyForcibly();
                p.waitFor(10, TimeUnit.SECONDS);
            }
        }

        Files.writeString(src.resolve("example/Sneaky.java"), SNEAKY);
        String errors = javac(modulePath, work.resolve("out2"), src.resolve("module-info.java"),
            src.resolve("example/Sneaky.java"));
        assertFalse(errors.isEmpty(), "a program compiled against dev.depot.core.store");
        assertTrue(errors.contains("dev.depot.core.store") && errors.contains("not visible"), errors);
        assertTrue(errors.contains("dev.depot.client.internal"), errors);
    }

    /** Compiles {@code sources} into {@code out} with the JDK's javac; returns the diagnostics, empty when it compiled. */
    private static String javac(String modulePath, Path out, Path... sources) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "javac").toString(),
            "--module-path", modulePath, "-d", out.toString()));
        for (Path s : sources) {
            cmd.add(s.toString());
        }
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        try {
            String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(60, TimeUnit.SECONDS), "javac did not finish within 60 s");
            return p.exitValue() == 0 ? "" : (text.isEmpty() ? "javac failed with status " + p.exitValue() : text);
        } finally {
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static String location(Class<?> c) throws URISyntaxException {
        return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    }
}
