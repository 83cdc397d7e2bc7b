package dev.depot.server;

import dev.depot.client.DepotDirectory;
import dev.depot.core.clients.ClientTableDescriptor;
import java.nio.file.Path;

/**
 * How a daemon runs. Each setting has a default; {@code capacity}, {@code maxClients}, {@code pinsPerClient} and
 * {@code maxObjects} only matter when the daemon creates the store (an existing store keeps its own).
 *
 * @param directory     store directory (default {@link DepotDirectory#defaultDirectory()})
 * @param capacity      heap bytes of a new store; 0 (the default) means {@link #DEFAULT_CAPACITY} for a new store
 *                      and no opinion about an existing one (only a capacity given and different is logged)
 * @param maxClients    client table size (default 128)
 * @param pinsPerClient pins one client may hold at once (default 4096)
 * @param indexSlots    object index slots, a power of two (0: one per 16 KiB of capacity)
 * @param controlSocket serve the control protocol on {@code DIR/depot.sock}
 * @param reapIntervalMillis how often dead clients are looked for (default 100 ms, so within 1 s)
 */
public record ServerConfig(Path directory, long capacity, int maxClients, int pinsPerClient, int indexSlots,
                           boolean controlSocket, long reapIntervalMillis) {
    public static final long DEFAULT_CAPACITY = 1L << 30;
    public static final long DEFAULT_REAP_INTERVAL_MILLIS = 100;

    public static ServerConfig defaults() {
        return new ServerConfig(DepotDirectory.defaultDirectory(), 0,
            ClientTableDescriptor.DEFAULT_MAX_CLIENTS, ClientTableDescriptor.DEFAULT_PINS_PER_CLIENT, 0, true,
            DEFAULT_REAP_INTERVAL_MILLIS);
    }

    /** The heap bytes a new store gets: {@link #capacity} when given, else {@link #DEFAULT_CAPACITY}. */
    public long capacityForNewStore() {
        return capacity > 0 ? capacity : DEFAULT_CAPACITY;
    }

    public ServerConfig withDirectory(Path d) {
        return new ServerConfig(d, capacity, maxClients, pinsPerClient, indexSlots, controlSocket, reapIntervalMillis);
    }

    public ServerConfig withCapacity(long c) {
        return new ServerConfig(directory, c, maxClients, pinsPerClient, indexSlots, controlSocket, reapIntervalMillis);
    }

    public ServerConfig withMaxClients(int m) {
        return new ServerConfig(directory, capacity, m, pinsPerClient, indexSlots, controlSocket, reapIntervalMillis);
    }

    public ServerConfig withPinsPerClient(int p) {
        return new ServerConfig(directory, capacity, maxClients, p, indexSlots, controlSocket, reapIntervalMillis);
    }

    public ServerConfig withIndexSlots(int s) {
        return new ServerConfig(directory, capacity, maxClients, pinsPerClient, s, controlSocket, reapIntervalMillis);
    }

    public ServerConfig withControlSocket(boolean on) {
        return new ServerConfig(directory, capacity, maxClients, pinsPerClient, indexSlots, on, reapIntervalMillis);
    }
}
