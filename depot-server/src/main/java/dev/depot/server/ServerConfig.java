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
 * @param maxClients    client table size (default {@link ClientTableDescriptor#DEFAULT_MAX_CLIENTS}, 1024)
 * @param pinsPerClient pins one client may hold at once (default 4096)
 * @param indexSlots    object index slots, a power of two (0: one per 16 KiB of capacity)
 * @param controlSocket serve the control protocol on {@code DIR/depot.sock}
 * @param reapIntervalMillis how often dead clients are looked for (default 100 ms, so within 1 s)
 * @param spillDirectory where KEEP objects are spilled when room is needed (null: no spilling, the default)
 * @param spillLimit    most bytes the spill directory may hold (default {@link #DEFAULT_SPILL_LIMIT})
 */
public record ServerConfig(Path directory, long capacity, int maxClients, int pinsPerClient, int indexSlots,
                           boolean controlSocket, long reapIntervalMillis, Path spillDirectory, long spillLimit) {
    public static final long DEFAULT_CAPACITY = 1L << 30;
    public static final long DEFAULT_REAP_INTERVAL_MILLIS = 100;
    /** No limit but the disk's. */
    public static final long DEFAULT_SPILL_LIMIT = Long.MAX_VALUE;

    public static ServerConfig defaults() {
        return new ServerConfig(DepotDirectory.defaultDirectory(), 0,
            ClientTableDescriptor.DEFAULT_MAX_CLIENTS, ClientTableDescriptor.DEFAULT_PINS_PER_CLIENT, 0, true,
            DEFAULT_REAP_INTERVAL_MILLIS, null, DEFAULT_SPILL_LIMIT);
    }

    /** The heap bytes a new store gets: {@link #capacity} when given, else {@link #DEFAULT_CAPACITY}. */
    public long capacityForNewStore() {
        return capacity > 0 ? capacity : DEFAULT_CAPACITY;
    }

    public ServerConfig withDirectory(Path d) {
        return new ServerConfig(d, capacity, maxClients, pinsPerClient, indexSlots, controlSocket, reapIntervalMillis,
            spillDirectory, spillLimit);
    }

    public ServerConfig withCapacity(long c) {
        return new ServerConfig(directory, c, maxClients, pinsPerClient, indexSlots, controlSocket, reapIntervalMillis,
            spillDirectory, spillLimit);
    }

    public ServerConfig withMaxClients(int m) {
        return new ServerConfig(directory, capacity, m, pinsPerClient, indexSlots, controlSocket, reapIntervalMillis,
            spillDirectory, spillLimit);
    }

    public ServerConfig withPinsPerClient(int p) {
        return new ServerConfig(directory, capacity, maxClients, p, indexSlots, controlSocket, reapIntervalMillis,
            spillDirectory, spillLimit);
    }

    public ServerConfig withIndexSlots(int s) {
        return new ServerConfig(directory, capacity, maxClients, pinsPerClient, s, controlSocket, reapIntervalMillis,
            spillDirectory, spillLimit);
    }

    public ServerConfig withControlSocket(boolean on) {
        return new ServerConfig(directory, capacity, maxClients, pinsPerClient, indexSlots, on, reapIntervalMillis,
            spillDirectory, spillLimit);
    }

    /** Spills KEEP objects to {@code d} (null: no spilling). */
    public ServerConfig withSpillDirectory(Path d) {
        return new ServerConfig(directory, capacity, maxClients, pinsPerClient, indexSlots, controlSocket,
            reapIntervalMillis, d, spillLimit);
    }

    public ServerConfig withSpillLimit(long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("the spill limit must be positive, got " + bytes);
        }
        return new ServerConfig(directory, capacity, maxClients, pinsPerClient, indexSlots, controlSocket,
            reapIntervalMillis, spillDirectory, bytes);
    }
}
