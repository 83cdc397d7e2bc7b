package dev.depot.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.client.testing.ModularProgram;
import dev.depot.client.testing.TempStore;
import dev.depot.core.store.Store;
import java.nio.file.Path;
import java.util.List;
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
        ModularProgram program = new ModularProgram(work, DepotClient.class, Store.class)
            .source("module-info.java", MODULE_INFO).source("example/Main.java", MAIN);
        assertEquals("", program.compile("out", "module-info.java", "example/Main.java"));

        try (TempStore temp = new TempStore()) {
            temp.create(1 << 20).close();
            String text = program.run("out", "example/example.Main", temp.dir().toString());
            assertEquals(List.of("size 3", "no store: StoreNotFoundException", "internals visible: false"),
                text.lines().toList());
        }

        String errors = program.source("example/Sneaky.java", SNEAKY)
            .compile("out2", "module-info.java", "example/Sneaky.java");
        assertFalse(errors.isEmpty(), "a program compiled against dev.depot.core.store");
        assertTrue(errors.contains("dev.depot.core.store") && errors.contains("not visible"), errors);
        assertTrue(errors.contains("dev.depot.client.internal"), errors);
    }
}
