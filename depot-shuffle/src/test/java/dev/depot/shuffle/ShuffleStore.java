package dev.depot.shuffle;

import dev.depot.client.DepotClient;
import dev.depot.client.testing.TempStore;
import dev.depot.server.DepotServer;
import dev.depot.server.ServerConfig;
import java.nio.file.Path;

/** A daemon in this JVM on a fresh {@code /dev/shm/depot-test-*} store; close stops it and removes the store. */
final class ShuffleStore implements AutoCloseable {
    private final TempStore temp = new TempStore();
    private final DepotServer server;

    ShuffleStore(long capacity) {
        server = DepotServer.start(ServerConfig.defaults().withDirectory(temp.dir()).withCapacity(capacity)
            .withControlSocket(false), msg -> { });
    }

    Path dir() {
        return temp.dir();
    }

    DepotClient client() {
        return server.client();
    }

    /** Objects in the store that are not yet freed (sealed, being created, or deleted but pinned). */
    int objects() {
        return client().list().size();
    }

    @Override
    public void close() {
        try {
            server.close();
        } finally {
            temp.close();
        }
    }
}
