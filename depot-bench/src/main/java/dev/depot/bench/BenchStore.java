package dev.depot.bench;

import dev.depot.server.DepotServer;
import dev.depot.server.ServerConfig;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.UUID;
import java.util.stream.Stream;

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

    private final Path dir;
    private final DepotServer server;
    /** Removes the directory when the JVM is stopped (Ctrl-C, SIGTERM) before {@link #close}. */
    private final Thread onExit;

    private BenchStore(Path dir, DepotServer server) {
        this.dir = dir;
        this.server = server;
        this.onExit = new Thread(() -> deleteTree(dir), "depot-bench-cleanup");
        Runtime.getRuntime().addShutdownHook(onExit);
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
        Path dir = Path.of("/dev/shm", prefix() + UUID.randomUUID());
        try {
            ServerConfig config = ServerConfig.defaults().withDirectory(dir).withCapacity(capacity)
                .withControlSocket(controlSocket).withSpillDirectory(spillDirectory);
            return new BenchStore(dir, DepotServer.start(config, msg -> { }));
        } catch (RuntimeException e) {
            deleteTree(dir);
            throw e;
        }
    }

    /** The start of the names of the store directories this JVM makes: {@link #PREFIX} plus the tag, if set. */
    static String prefix() {
        return PREFIX + System.getProperty(TAG_PROPERTY, "");
    }

    Path dir() {
        return dir;
    }

    DepotServer server() {
        return server;
    }

    @Override
    public void close() {
        try {
            server.close();
        } finally {
            deleteTree(dir);
            try {
                Runtime.getRuntime().removeShutdownHook(onExit);
            } catch (IllegalStateException shuttingDown) {
                // the hook runs anyway; the directory is gone already
            }
        }
    }

    static void deleteTree(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot remove the benchmark store " + dir + ": " + e.getMessage(), e);
        }
    }
}
