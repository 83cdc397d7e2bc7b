package dev.depot.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.client.testing.TempStore;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** What a daemon says when it starts on a store that exists already. */
class ServerStartTest {
    private static List<String> startAndStop(ServerConfig config) {
        List<String> log = new CopyOnWriteArrayList<>();
        DepotServer.start(config, log::add).close();
        return log;
    }

    @Test
    void shouldMentionAnExistingStoresCapacityOnlyWhenADifferentOneWasAskedFor() {
        try (TempStore temp = new TempStore()) {
            ServerConfig base = ServerConfig.defaults().withDirectory(temp.dir()).withControlSocket(false);
            startAndStop(base.withCapacity(1 << 20));
            assertTrue(startAndStop(base).stream().noneMatch(l -> l.contains("exists with capacity")),
                "no --capacity given: nothing to say about the existing one");
            assertTrue(startAndStop(base.withCapacity(1 << 20)).stream().noneMatch(l -> l.contains("exists with capacity")),
                "the same capacity: nothing to say");
            List<String> differs = startAndStop(base.withCapacity(2 << 20));
            assertTrue(differs.stream().anyMatch(l -> l.contains("exists with capacity 1048576 bytes; keeping it")),
                differs::toString);
        }
    }

    @Test
    void shouldGiveANewStoreTheDefaultCapacityWhenNoneWasGiven() {
        // (Not by creating one: a 1 GiB store is a lot of /dev/shm for a test on a shared machine.)
        assertEquals(0, ServerConfig.defaults().capacity(), "not given");
        assertEquals(ServerConfig.DEFAULT_CAPACITY, ServerConfig.defaults().capacityForNewStore());
        assertEquals(1 << 20, ServerConfig.defaults().withCapacity(1 << 20).capacityForNewStore());
    }
}
