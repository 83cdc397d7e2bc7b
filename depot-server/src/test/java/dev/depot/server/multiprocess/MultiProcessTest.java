package dev.depot.server.multiprocess;

import static org.junit.jupiter.api.Assertions.*;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectState;
import dev.depot.client.ObjectView;
import dev.depot.client.StoreStats;
import dev.depot.client.testing.ChildJvm;
import dev.depot.client.testing.ClientStores;
import dev.depot.client.testing.TempStore;
import dev.depot.server.DepotServer;
import dev.depot.server.ServerConfig;
import dev.depot.client.testing.Eventually;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Producers, consumers, crashed clients and a crashed daemon, each in its own JVM. */
class MultiProcessTest {
    private static final long CAPACITY = 64L << 20;
    private TempStore temp;
    private final List<ChildJvm> children = new ArrayList<>();
    private DepotServer server;

    @BeforeEach
    void setUp() {
        temp = new TempStore();
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

    private DepotServer startDaemon() {
        server = DepotServer.start(ServerConfig.defaults().withDirectory(temp.dir()).withCapacity(CAPACITY)
            .withControlSocket(false), msg -> { });
        return server;
    }

    private ChildJvm child(Class<?> main, Object... args) {
        String[] a = new String[args.length];
        for (int i = 0; i < args.length; i++) {
            a[i] = String.valueOf(args[i]);
        }
        ChildJvm c = ChildJvm.start(main, a);
        children.add(c);
        return c;
    }

    @Test
    void shouldHandObjectsFromProducerProcessToWaitingConsumerProcess() throws Exception {
        startDaemon();
        String dir = temp.dir().toString();
        ChildJvm consumer = child(Children.Consumer.class, dir, "pc", 20, 1 << 20);
        consumer.awaitLine("waiting", 30);
        ChildJvm producer = child(Children.Producer.class, dir, "pc", 20, 1 << 20);
        assertEquals("produced 20", producer.awaitLine("produced", 60));
        assertEquals("consumed 20", consumer.awaitLine("", 60));
        assertEquals(0, consumer.waitFor(30));
    }

    @Test
    void shouldReclaimUnsealedObjectOfKilledClient() throws Exception {
        DepotClient depot = startDaemon().client();
        ChildJvm writer = child(Children.HalfWriter.class, temp.dir(), "half", 8 << 20);
        writer.awaitLine("created", 30);
        StoreStats before = depot.stats();
        assertEquals(8 << 20, before.unsealedBytes());
        assertEquals(2, before.clientCount());
        writer.kill();
        // The reaper frees the unsealed object under the lock and the slot after it: wait for both.
        Eventually.await("unsealed bytes reclaimed and the slot freed", () -> {
            StoreStats s = depot.stats();
            return s.unsealedBytes() == 0 && s.clientCount() == 1;
        });
        StoreStats after = depot.stats();
        assertEquals(0, after.usedBytes());
        assertEquals(1, after.clientCount());
        // The id is free again.
        depot.put(Payloads.id("half", 8 << 20), new byte[8 << 20]);
    }

    @Test
    void shouldReleasePinsOfKilledClientAndFinishItsDeferredDelete() throws Exception {
        DepotClient depot = startDaemon().client();
        for (int i = 0; i < 3; i++) {
            depot.put(Payloads.id("p" + i, 4096), new byte[4096]);
        }
        ChildJvm pinner = child(Children.Pinner.class, temp.dir(), 4096, "p0", "p1", "p2");
        pinner.awaitLine("pinned 3", 30);
        assertEquals(3 * 4096, depot.stats().pinnedBytes());
        assertTrue(depot.delete(Payloads.id("p1", 4096)));
        assertEquals(ObjectState.DELETE_PENDING, depot.list().stream()
            .filter(o -> o.id().equals(Payloads.id("p1", 4096))).findFirst().orElseThrow().state());
        pinner.kill();
        Eventually.await("pins released", () -> depot.stats().pinnedBytes() == 0);
        Eventually.await("deferred delete completed", () -> depot.list().size() == 2);
        assertEquals(0, depot.evict(1) > 0 ? 0 : 1, "unpinned objects are evictable again");
    }

    @Test
    void shouldKeepSealedObjectsWhenDaemonIsKilledAndRestarted() throws Exception {
        ChildJvm daemon = child(Children.Daemon.class, temp.dir(), CAPACITY);
        daemon.awaitLine("ready", 30);
        try (DepotClient depot = DepotClient.open(temp.dir())) {
            for (int i = 0; i < 10; i++) {
                String name = "d" + i;
                try (var w = depot.create(Payloads.id(name, 10_000), 10_000)) {
                    Payloads.fill(w.data(), name);
                    w.seal();
                }
            }
            daemon.kill();
            // Clients keep working without a daemon: reads and writes are shared memory.
            depot.put(ObjectId.of("while-down"), new byte[] {42});
            ChildJvm second = child(Children.Daemon.class, temp.dir(), CAPACITY);
            second.awaitLine("ready", 30);
            for (int i = 0; i < 10; i++) {
                String name = "d" + i;
                try (ObjectView v = depot.get(Payloads.id(name, 10_000), 0)) {
                    assertNull(Payloads.verify(v.data(), name));
                }
            }
            assertTrue(depot.contains(ObjectId.of("while-down")));
            assertEquals(11, depot.stats().objectCount());
            // The new daemon reaps dead clients.
            ChildJvm writer = child(Children.HalfWriter.class, temp.dir(), "h", 1000);
            writer.awaitLine("created", 30);
            writer.kill();
            Eventually.await("new daemon reclaimed the killed writer", () -> depot.stats().unsealedBytes() == 0);
        }
    }

    @Test
    void shouldStayConsistentUnderConcurrentProcesses() throws Exception {
        DepotClient depot = startDaemon().client();
        // One worker per JIT setting (interpreter, C1 only, full tiering): orderings that one compiler happens to
        // keep may break under another.
        List<List<String>> jits = List.of(List.of("-Xint"), List.of("-XX:TieredStopAtLevel=1"), List.of());
        List<ChildJvm> workers = new ArrayList<>();
        for (int i = 0; i < jits.size(); i++) {
            ChildJvm w = ChildJvm.startWith(jits.get(i), Children.Stress.class, temp.dir().toString(),
                Integer.toString(1000 + i), Integer.toString(jits.get(i).isEmpty() ? 3000 : 1500), "40");
            children.add(w);
            workers.add(w);
        }
        for (ChildJvm w : workers) {
            String line = w.awaitLine("", 120);
            assertTrue(line.startsWith("ok"), line);
            assertEquals(0, w.waitFor(30));
        }
        Eventually.await("all stress clients gone", () -> depot.stats().clientCount() == 1);
        StoreStats before = depot.stats();
        assertEquals(0, before.pinnedBytes());
        assertEquals(0, before.unsealedBytes());
        assertTrue(ClientStores.storeOf(depot).recover().isEmpty(), "index and heap agree");
        assertEquals(before.usedBytes(), depot.stats().usedBytes(), "rebuilding the heap changes nothing");
        for (var o : depot.list()) {
            assertEquals(ObjectState.SEALED, o.state());
        }
    }
}
