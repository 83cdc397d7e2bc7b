package dev.depot.server.multiprocess;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectEvent;
import dev.depot.client.ObjectId;
import dev.depot.client.Subscription;
import dev.depot.client.testing.ChildJvm;
import dev.depot.client.testing.ClientStores;
import dev.depot.client.testing.TempStore;
import dev.depot.core.notify.NotificationDescriptor;
import dev.depot.server.DepotServer;
import dev.depot.server.ServerConfig;
import dev.depot.client.testing.Eventually;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Notifications across processes: a subscriber sees what a writer in another JVM seals and deletes, a writer sees
 * its seals reach a subscriber in another JVM, and a subscriber killed with SIGKILL gives its slot back through the
 * daemon's reaper. Nothing asserts on time.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class NotificationProcessTest {
    private static final long CAPACITY = 8L << 20;
    private static final long WAIT_MILLIS = 60_000;

    /** {@code DIR COUNT}: puts and deletes COUNT objects note-i of i+1 bytes, prints {@code done}. */
    static final class Writer {
        public static void main(String[] a) {
            try (DepotClient depot = DepotClient.open(Path.of(a[0]))) {
                for (int i = 0; i < Integer.parseInt(a[1]); i++) {
                    depot.put(ObjectId.of("note-" + i), new byte[i + 1]);
                    depot.delete(ObjectId.of("note-" + i));
                }
            }
            System.out.println("done");
        }
    }

    /** {@code DIR COUNT}: subscribes, prints {@code subscribed}, then prints COUNT events, then hangs. */
    static final class Watcher {
        public static void main(String[] a) throws InterruptedException {
            DepotClient depot = DepotClient.open(Path.of(a[0]));
            Subscription s = depot.subscribe();
            System.out.println("subscribed");
            System.out.flush();
            for (int i = 0; i < Integer.parseInt(a[1]); i++) {
                ObjectEvent e = s.next(WAIT_MILLIS);
                System.out.println(e == null ? "none" : e.type() + " " + e.id().toHex() + " " + e.dataSize() + " "
                    + e.publisherPid());
                System.out.flush();
            }
            Children.sleepForever();
        }
    }

    @Test
    void shouldSeeEverySealAndDeleteOfAWriterInAnotherJvm() throws Exception {
        int count = 20;
        try (TempStore temp = new TempStore(); DepotServer server = daemon(temp);
             Subscription s = server.client().subscribe();
             ChildJvm writer = ChildJvm.start(Writer.class, temp.dir().toString(), String.valueOf(count))) {
            List<String> seen = new ArrayList<>();
            for (int i = 0; i < 2 * count; i++) {
                ObjectEvent e = s.next(WAIT_MILLIS);
                assertNotNull(e, "event " + i + " of " + 2 * count);
                assertEquals(writer.pid(), e.publisherPid(), e::toString);
                seen.add(e.type() + " " + e.id().toHex() + " " + e.dataSize());
            }
            List<String> expected = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                expected.add("SEALED " + ObjectId.of("note-" + i).toHex() + " " + (i + 1));
                expected.add("DELETED " + ObjectId.of("note-" + i).toHex() + " " + (i + 1));
            }
            assertEquals(expected, seen);
            assertEquals("done", writer.awaitLine("done", 60));
            assertEquals(0, writer.waitFor(30));
        }
    }

    @Test
    void shouldReachASubscriberInAnotherJvmAndFreeItsSlotWhenItIsKilled() throws Exception {
        try (TempStore temp = new TempStore(); DepotServer server = daemon(temp)) {
            DepotClient depot = server.client();
            try (ChildJvm watcher = ChildJvm.start(Watcher.class, temp.dir().toString(), "1")) {
                watcher.awaitLine("subscribed", 60);
                assertEquals(1, ClientStores.storeOf(depot).subscriberCount());
                depot.put(ObjectId.of("seen"), new byte[42]);
                assertEquals("SEALED " + ObjectId.of("seen").toHex() + " 42 " + ProcessHandle.current().pid(),
                    watcher.awaitLine("SEALED", 60));
                watcher.kill();
            }
            // The reaper runs every 100 ms.
            Eventually.await("the dead subscriber's slot freed", () -> ClientStores.storeOf(depot).subscriberCount() == 0);
            List<Subscription> all = new ArrayList<>();
            for (int i = 0; i < NotificationDescriptor.SUBSCRIBERS; i++) {
                all.add(depot.subscribe());
            }
            all.forEach(Subscription::close);
        }
    }

    @Test
    void shouldAnnounceTheSpillsAndRestoresOfTheDaemon() throws Exception {
        long size = 1L << 20;
        try (TempStore temp = new TempStore(); DepotServer server = DepotServer.start(ServerConfig.defaults()
            .withDirectory(temp.dir()).withCapacity(CAPACITY).withControlSocket(false)
            .withSpillDirectory(temp.dir().resolve("spill")), msg -> { })) {
            DepotClient depot = server.client();
            try (Subscription s = depot.subscribe()) {
                for (int i = 0; i < 12; i++) {  // 12 MiB of KEEP objects in 8 MiB: some are spilled
                    try (var w = depot.create(ObjectId.of("kept-" + i), size, new byte[0], DepotClient.CreateOption.KEEP)) {
                        w.seal();
                    }
                }
                ObjectId first = ObjectId.of("kept-0");
                depot.get(first, WAIT_MILLIS).close();  // spilled first (least recently used): restored now
                List<ObjectEvent.Type> types = new ArrayList<>();
                ObjectEvent e;
                do {
                    e = s.next(WAIT_MILLIS);
                    assertNotNull(e, "no RESTORED event after " + types);
                    types.add(e.type());
                    if (e.type() == ObjectEvent.Type.SPILLED || e.type() == ObjectEvent.Type.RESTORED) {
                        assertEquals(size, e.dataSize());
                        assertEquals(ProcessHandle.current().pid(), e.publisherPid(), "the daemon (this JVM) spills");
                    }
                } while (!(e.type() == ObjectEvent.Type.RESTORED && e.id().equals(first)));
                assertEquals(12, types.stream().filter(t -> t == ObjectEvent.Type.SEALED).count(), types::toString);
                assertTrue(types.contains(ObjectEvent.Type.SPILLED), types::toString);
            }
        }
    }

    private static DepotServer daemon(TempStore temp) {
        return DepotServer.start(ServerConfig.defaults().withDirectory(temp.dir()).withCapacity(CAPACITY)
            .withControlSocket(false), msg -> { });
    }
}
