package dev.depot.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectState;
import dev.depot.client.testing.ChildJvm;
import dev.depot.client.testing.TempStore;
import dev.depot.server.DepotServer;
import dev.depot.server.ServerConfig;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The manifest of an abandoned shuffle spilled to disk: swept once a daemon can restore it, skipped before. */
class AbandonedSpilledShuffleTest {
    private static final long CAPACITY = 8L << 20;
    private static final long FILLER = 1L << 20;

    private final TempStore temp = new TempStore();
    private DepotServer server;

    @AfterEach
    void stop() {
        try {
            if (server != null) {
                server.close();
            }
        } finally {
            temp.close();
        }
    }

    private DepotServer startDaemon() {
        return DepotServer.start(ServerConfig.defaults().withDirectory(temp.dir()).withCapacity(CAPACITY)
            .withControlSocket(false).withSpillDirectory(temp.dir().resolve("spill")), msg -> { });
    }

    private static ObjectState stateOf(DepotClient client, ObjectId id) {
        return client.list().stream().filter(o -> o.id().equals(id)).findFirst().orElseThrow().state();
    }

    @Test
    void shouldSkipASpilledManifestWithoutADaemonAndSweepItOnceOneRestoresIt() throws InterruptedException {
        server = startDaemon();
        ObjectId manifest = new ShuffleIds("spilled-1").manifest();
        try (ChildJvm coordinator = ChildJvm.start(CoordinatorMain.class, temp.dir().toString(), "spilled-1", "1", "1");
             DepotClient client = DepotClient.open(temp.dir())) {
            coordinator.awaitLine("created", 60);
            coordinator.kill();
            // KEEP fillers push the oldest KEEP object, the manifest, out to disk.
            for (int i = 0; i < 10; i++) {
                try (var w = client.create(ObjectId.of("filler-" + i), FILLER, new byte[0],
                    DepotClient.CreateOption.KEEP)) {
                    w.seal();
                }
            }
            assertEquals(ObjectState.SPILLED, stateOf(client, manifest));

            server.close();
            server = null;
            assertEquals(List.of(), Shuffle.sweepAbandoned(client), "no daemon can restore the manifest: skipped");
            assertEquals(ObjectState.SPILLED, stateOf(client, manifest));

            server = startDaemon();
            assertEquals(List.of("spilled-1"),
                Shuffle.sweepAbandoned(client).stream().map(AbandonedShuffle::id).toList());
            assertFalse(client.contains(manifest));
            for (int i = 0; i < 10; i++) {
                client.delete(ObjectId.of("filler-" + i));
            }
        }
    }
}
