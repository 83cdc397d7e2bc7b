package dev.depot.server.multiprocess;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectWriter;
import dev.depot.client.testing.ChildJvm;
import dev.depot.client.testing.ClientStores;
import dev.depot.client.testing.TempStore;
import dev.depot.core.memory.Atomics;
import dev.depot.core.store.StoreHeaderDescriptor;
import dev.depot.errors.StoreFullException;
import dev.depot.server.DepotServer;
import dev.depot.server.ServerConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A create without eviction that waits for room is woken by a delete in another process, and one that nobody
 * makes room for fails after its timeout. Nothing asserts on time.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class BlockingCreateProcessTest {
    private static final long CAPACITY = 8L << 20;
    private static final long SIZE = 6L << 20;

    /** {@code DIR}: puts "big", prints {@code put}, deletes it once a create waits for room, prints {@code deleted}. */
    static final class DeleterWhenWaitedFor {
        public static void main(String[] a) {
            try (DepotClient depot = DepotClient.open(Path.of(a[0]))) {
                depot.put(ObjectId.of("big"), new byte[(int) SIZE]);
                System.out.println("put");
                System.out.flush();
                while (Atomics.getIntVolatile(ClientStores.storeOf(depot).header(), StoreHeaderDescriptor.SPACE_WAITERS_OFFSET) == 0) {
                    Thread.onSpinWait();
                }
                depot.delete(ObjectId.of("big"));
                System.out.println("deleted");
            }
        }
    }

    @Test
    void shouldWakeACreateWhenAnotherProcessDeletesAndTimeOutWhenNobodyDoes() throws Exception {
        try (TempStore temp = new TempStore();
             DepotServer server = DepotServer.start(ServerConfig.defaults().withDirectory(temp.dir())
                 .withCapacity(CAPACITY).withControlSocket(false), msg -> { });
             ChildJvm child = ChildJvm.start(DeleterWhenWaitedFor.class, temp.dir().toString())) {
            DepotClient depot = server.client();
            child.awaitLine("put", 60);
            try (ObjectWriter w = depot.create(ObjectId.of("next"), SIZE, new byte[0], Duration.ofSeconds(60),
                DepotClient.CreateOption.NO_EVICT)) {
                w.seal();
            }
            assertEquals("deleted", child.awaitLine("deleted", 60));
            assertEquals(0, child.waitFor(30));
            assertTrue(depot.contains(ObjectId.of("next")));
            var e = assertThrows(StoreFullException.class, () -> depot.create(ObjectId.of("more"), SIZE, new byte[0],
                Duration.ofMillis(50), DepotClient.CreateOption.NO_EVICT));
            assertTrue(e.getMessage().contains("eviction is off for this create"), e.getMessage());
        }
    }
}
