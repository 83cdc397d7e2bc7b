package dev.depot.server.multiprocess;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectInfo;
import dev.depot.client.ObjectState;
import dev.depot.client.ObjectView;
import dev.depot.client.ObjectWriter;
import dev.depot.client.testing.ChildJvm;
import dev.depot.client.testing.TempStore;
import dev.depot.errors.StoreFullException;
import dev.depot.server.DepotServer;
import dev.depot.server.ServerConfig;
import dev.depot.server.spill.Spiller;
import dev.depot.client.testing.Eventually;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * KEEP objects spilled to disk when room is needed and restored on get: in one process, across processes, and
 * with the daemon killed in the middle of a spill and of a restore. Every object is verified byte for byte; no
 * assertion is about time (the timeouts only bound a broken build).
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class SpillTest {
    private static final long CAPACITY = 8L << 20;
    private static final long SIZE = 1L << 20;
    private static final int COUNT = 20;

    private TempStore temp;
    private Path spillDir;
    private final List<ChildJvm> children = new ArrayList<>();
    private DepotServer server;

    @BeforeEach
    void setUp() {
        temp = new TempStore();
        spillDir = temp.dir().resolve("spill");
    }

    @AfterEach
    void tearDown() throws Exception {
        try {
            for (ChildJvm c : children) {
                c.close();
            }
            if (server != null) {
                server.close();
            }
        } finally {
            temp.close();
        }
    }

    private ServerConfig config() {
        return ServerConfig.defaults().withDirectory(temp.dir()).withCapacity(CAPACITY).withControlSocket(false)
            .withSpillDirectory(spillDir);
    }

    private ChildJvm child(List<String> jvmOptions, Class<?> main, Object... args) {
        String[] a = new String[args.length];
        for (int i = 0; i < args.length; i++) {
            a[i] = String.valueOf(args[i]);
        }
        ChildJvm c = ChildJvm.startWith(jvmOptions, main, a);
        children.add(c);
        return c;
    }

    private static void putKeep(DepotClient depot, String name) {
        try (ObjectWriter w = depot.create(Payloads.id(name, SIZE), SIZE, new byte[] {7}, DepotClient.CreateOption.KEEP)) {
            Payloads.fill(w.data(), name);
            w.seal();
        }
    }

    private static void assertAllVerified(DepotClient depot, String prefix, int count) {
        for (int i = 0; i < count; i++) {
            String name = SpillChildren.name(prefix, i);
            try (ObjectView v = depot.get(Payloads.id(name, SIZE), 60_000)) {
                assertNull(Payloads.verify(v.data(), name));
                assertEquals(7, v.metadata()[0], "metadata of " + name + " came back too");
            }
        }
    }

    private long spillFiles() throws IOException {
        try (Stream<Path> s = Files.list(spillDir)) {
            return s.filter(p -> p.toString().endsWith(".spill")).count();
        }
    }

    /**
     * The store's count of spilled objects once the spiller has finished what it began. A create returns as soon
     * as the spiller's last commit freed its room, and the spiller, which saw that room taken, may already be
     * writing one more file; so the count is read when it agrees with the files: one per spilled object, plus
     * one per {@code copies} resident object that has one. Fails if they never agree.
     */
    private long settledSpilledObjects(DepotClient depot, int copies) throws Exception {
        long[] spilled = new long[1];
        Eventually.await("one whole file per spilled object, plus " + copies + " copies", () -> {
            spilled[0] = depot.stats().spilledObjects();
            return spillFiles() == spilled[0] + copies && depot.stats().spilledObjects() == spilled[0];
        });
        return spilled[0];
    }

    @Test
    void shouldSpillKeepObjectsWhenFullAndRestoreEveryOneByteExactOnGet() throws Exception {
        server = DepotServer.start(config(), msg -> { });
        try (DepotClient depot = DepotClient.open(temp.dir())) {
            putKeep(depot, "k-0");
            try (ObjectView pinned = depot.get(Payloads.id("k-0", SIZE), 0)) {
                for (int i = 1; i < COUNT; i++) {
                    putKeep(depot, SpillChildren.name("k", i));
                }
                // One whole file per spilled object, and one for the pinned object, whose spill was tried and
                // refused: that file stays as a copy (the object is immutable), so the next try writes nothing.
                assertTrue(settledSpilledObjects(depot, 1) > 0, "objects were spilled");
                assertEquals(spillDir.toAbsolutePath().toString(), depot.stats().spillDirectory());
                ObjectInfo first = depot.list().stream().filter(o -> o.id().equals(Payloads.id("k-0", SIZE)))
                    .findFirst().orElseThrow();
                assertEquals(ObjectState.SEALED, first.state(), "a pinned object is never spilled");
                assertNull(Payloads.verify(pinned.data(), "k-0"));
            }
            assertAllVerified(depot, "k", COUNT);
            assertTrue(depot.stats().restoreCount() > 0);
        }
    }

    @Test
    void shouldDeleteASpilledObjectAndLaterItsFile() throws Exception {
        server = DepotServer.start(config(), msg -> { });
        try (DepotClient depot = DepotClient.open(temp.dir())) {
            for (int i = 0; i < COUNT; i++) {
                putKeep(depot, SpillChildren.name("d", i));
            }
            long spilled = settledSpilledObjects(depot, 0);
            assertTrue(spilled > 0);
            // The oldest are spilled first.
            assertEquals(ObjectState.SPILLED, stateOf(depot, "d-0"));
            assertTrue(depot.delete(SpillChildren.id("d", 0, SIZE)));
            assertFalse(depot.contains(SpillChildren.id("d", 0, SIZE)));
            assertEquals(spilled - 1, depot.stats().spilledObjects());
            Eventually.await("the spiller removing the deleted object's file", () -> spillFiles() == spilled - 1);
        }
    }

    @Test
    void shouldKeepARestoredObjectsFileSoThatSpillingItAgainWritesNothingUntilItIsDeleted() throws Exception {
        server = DepotServer.start(config(), msg -> { });
        try (DepotClient depot = DepotClient.open(temp.dir())) {
            for (int i = 0; i < COUNT; i++) {
                putKeep(depot, SpillChildren.name("c", i));
            }
            settledSpilledObjects(depot, 0);
            assertEquals(ObjectState.SPILLED, stateOf(depot, "c-0"));
            Path file = spillFileOf("c-0");
            Object inode = Files.getAttribute(file, "unix:ino");
            var written = Files.getLastModifiedTime(file);
            assertAllVerified(depot, "c", 1);
            assertEquals(ObjectState.SEALED, stateOf(depot, "c-0"));
            assertTrue(Files.exists(file), "a restored object keeps its file");
            assertEquals(spilledInList(depot), depot.stats().spilledObjects(), "a resident object's file is not spilled data");

            // A restarted daemon adopts the copy and does not count it as spilled either.
            server.close();
            server = DepotServer.start(config(), msg -> { });
            assertTrue(Files.exists(file), "the next daemon keeps the file of a resident KEEP object");
            assertEquals(spilledInList(depot), depot.stats().spilledObjects());

            for (int i = 0; i < COUNT && stateOf(depot, "c-0") != ObjectState.SPILLED; i++) {
                putKeep(depot, SpillChildren.name("more", i));
            }
            assertEquals(ObjectState.SPILLED, stateOf(depot, "c-0"), "spilled again");
            assertEquals(inode, Files.getAttribute(file, "unix:ino"), "the same file, not a new one");
            assertEquals(written, Files.getLastModifiedTime(file), "nothing was written to it");
            assertAllVerified(depot, "c", 1);

            assertTrue(depot.delete(Payloads.id("c-0", SIZE)));
            Eventually.await("the file going with the resident object's delete", () -> !Files.exists(file));
        }
    }

    @Test
    void shouldDropCopiesOfResidentObjectsBeforeFailingAtTheSpillLimit() throws Exception {
        long block = dev.depot.core.heap.HeapBlockDescriptor.blockSizeFor(SIZE, 1);
        long limit = 8 * block;
        server = DepotServer.start(config().withSpillLimit(limit), msg -> { });
        try (DepotClient depot = DepotClient.open(temp.dir())) {
            int count = 12;
            for (int i = 0; i < count; i++) {
                putKeep(depot, SpillChildren.name("q", i));
            }
            // Reading everything back restores the spilled ones (their files stay as copies) and spills others:
            // without dropping copies the directory would pass its limit and the restores would fail.
            for (int round = 0; round < 2; round++) {
                assertAllVerified(depot, "q", count);
            }
            try (Stream<Path> files = Files.list(spillDir)) {
                long bytes = files.filter(p -> p.toString().endsWith(".spill")).count() * block;
                assertTrue(bytes <= limit, "the directory holds " + bytes + " bytes of files, limit " + limit);
            }
        }
    }

    private Path spillFileOf(String name) throws IOException {
        String prefix = Payloads.id(name, SIZE).toHex() + ".";
        try (Stream<Path> s = Files.list(spillDir)) {
            return s.filter(p -> p.getFileName().toString().startsWith(prefix) && p.toString().endsWith(".spill"))
                .findFirst().orElseThrow(() -> new AssertionError("no spill file of " + name + " in " + spillDir));
        }
    }

    private static long spilledInList(DepotClient depot) {
        return depot.list().stream().filter(o -> o.state() == ObjectState.SPILLED).count();
    }

    private static ObjectState stateOf(DepotClient depot, String name) {
        return depot.list().stream().filter(o -> o.id().equals(Payloads.id(name, SIZE))).findFirst().orElseThrow().state();
    }

    @Test
    void shouldFailWithAnErrorNamingTheSpillDirectoryAtItsLimit() {
        server = DepotServer.start(config().withSpillLimit(3 * SIZE), msg -> { });
        try (DepotClient depot = DepotClient.open(temp.dir())) {
            var e = assertThrows(StoreFullException.class, () -> {
                for (int i = 0; i < COUNT; i++) {
                    putKeep(depot, SpillChildren.name("l", i));
                }
            });
            assertTrue(e.getMessage().contains("the spill directory " + spillDir.toAbsolutePath() + " holds its limit"),
                e.getMessage());
        }
    }

    @Test
    void shouldKeepEveryObjectByteExactWhenTheDaemonIsKilledMidSpill() throws Exception {
        ChildJvm daemon = child(List.of("-D" + Spiller.TEST_PAUSE_PROP_NAME + "=spill"), SpillChildren.SpillDaemon.class,
            temp.dir(), CAPACITY, spillDir);
        daemon.awaitLine("ready", 60);
        ChildJvm writer = child(List.of(), SpillChildren.KeepWriter.class, temp.dir(), "s", COUNT, SIZE);
        daemon.awaitLine("spill paused", 60);
        daemon.kill();
        // A temporary file is left behind; the next daemon removes it and spills again.
        server = DepotServer.start(config(), msg -> { });
        assertEquals("done", writer.awaitLine("done", 120));
        assertEquals(0, writer.waitFor(30));
        try (DepotClient depot = DepotClient.open(temp.dir())) {
            assertAllVerified(depot, "s", COUNT);
        }
        try (Stream<Path> s = Files.list(spillDir)) {
            assertTrue(s.noneMatch(p -> p.toString().endsWith(".tmp")), "no temporary file is left");
        }
    }

    @Test
    void shouldKeepEveryObjectByteExactWhenTheDaemonIsKilledMidRestore() throws Exception {
        ChildJvm daemon = child(List.of("-D" + Spiller.TEST_PAUSE_PROP_NAME + "=restore"),
            SpillChildren.SpillDaemon.class, temp.dir(), CAPACITY, spillDir);
        daemon.awaitLine("ready", 60);
        ChildJvm writer = child(List.of(), SpillChildren.KeepWriter.class, temp.dir(), "r", COUNT, SIZE);
        assertEquals("done", writer.awaitLine("done", 120));
        assertEquals(0, writer.waitFor(30));
        ChildJvm reader = child(List.of(), SpillChildren.Reader.class, temp.dir(), SpillChildren.name("r", 0), SIZE);
        daemon.awaitLine("restore paused", 60);
        daemon.kill();
        reader.kill();
        server = DepotServer.start(config(), msg -> { });
        try (DepotClient depot = DepotClient.open(temp.dir())) {
            assertAllVerified(depot, "r", COUNT);
        }
    }
}
