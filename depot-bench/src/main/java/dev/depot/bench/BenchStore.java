package dev.depot.bench;

import dev.depot.core.store.ScratchDirectory;
import dev.depot.server.DepotServer;
import dev.depot.server.ServerConfig;
import java.nio.file.Path;

/**
 * A store hosted by this (driver) process in a fresh directory {@code /dev/shm/depot-bench-*}. Closing stops the
 * daemon and deletes the directory; benchmarks use it in try-with-resources so the directory also goes when a
 * benchmark fails.
 */
final class BenchStore implements AutoCloseable {
    static final String PREFIX = "depot-bench-";
    /**
     * Optional tag put after {@link #PREFIX} in every store directory this JVM makes, so a test can tell its own
     * stores from those of other benchmark runs on the same machine (and never touch theirs).
     */
    static final String TAG_PROPERTY = "depot.bench.tag";

    /** Also removed when the JVM is stopped (Ctrl-C, SIGTERM) before {@link #close}. */
    private final ScratchDirectory dir;
    private final DepotServer server;

    private BenchStore(ScratchDirectory dir, DepotServer server) {
        this.dir = dir;
        this.server = server;
    }

    static BenchStore start(long capacity) {
        return start(capacity, false);
    }

    /** As {@link #start(long)}; with {@code controlSocket}, also serves the control protocol (Python clients). */
    static BenchStore start(long capacity, boolean controlSocket) {
        return start(capacity, controlSocket, null);
    }

    /** As {@link #start(long, boolean)}; with a {@code spillDirectory}, the daemon spills KEEP objects there. */
    static BenchStore start(long capacity, boolean controlSocket, Path spillDirectory) {
        ScratchDirectory dir = new ScratchDirectory(prefix());
        try {
            ServerConfig config = ServerConfig.defaults().withDirectory(dir.path()).withCapacity(capacity)
                .withControlSocket(controlSocket).withSpillDirectory(spillDirectory);
            return new BenchStore(dir, DepotServer.start(config, msg -> { }));
        } catch (RuntimeException e) {
            dir.close();
            throw e;
        }
    }

    /**
     * The start of the names of the store directories this JVM makes: {@link #PREFIX} plus the tag, if set (the
     * directory is this, a dash and a UUID).
     */
    static String prefix() {
        return PREFIX + System.getProperty(TAG_PROPERTY, "");
    }

    Path dir() {
        return dir.path();
    }

    DepotServer server() {
        return server;
    }

    @Override
    public void close() {
        try {
            server.close();
        } finally {
            dir.close();
        }
    }

    /** Removes {@code dir} and everything in it ({@link ScratchDirectory#deleteTree}). */
    static void deleteTree(Path dir) {
        ScratchDirectory.deleteTree(dir);
    }
}
