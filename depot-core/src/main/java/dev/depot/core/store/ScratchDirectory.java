package dev.depot.core.store;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.UUID;
import java.util.stream.Stream;

/**
 * A store directory for one run of a benchmark, harness or test: {@code /dev/shm/PREFIX-UUID}, fresh (not
 * created here: the daemon or {@link Store#create} creates it), removed with everything in it by {@link #close}.
 * Until then a shutdown hook removes it when the JVM stops early (Ctrl-C, SIGTERM), after running the
 * optional {@code atExit} action (which stops what still uses the store, e.g. worker processes).
 *
 * <p>Lifecycle: open on construction; {@link #close} is idempotent (a second call finds nothing to remove).
 */
public final class ScratchDirectory implements AutoCloseable {
    /** Where scratch stores go: shared memory, as every store. */
    public static final Path ROOT = Path.of("/dev/shm");

    private final Path path;
    private final Thread onExit;

    /** A fresh {@code /dev/shm/PREFIX-UUID} (a prefix that ends with a dash gets no second one). */
    public ScratchDirectory(String prefix) {
        this(prefix, () -> { });
    }

    /** As {@link #ScratchDirectory(String)}; the shutdown hook runs {@code atExit} before it removes the directory. */
    public ScratchDirectory(String prefix, Runnable atExit) {
        this.path = ROOT.resolve((prefix.endsWith("-") ? prefix : prefix + "-") + UUID.randomUUID());
        this.onExit = new Thread(() -> {
            try {
                atExit.run();
            } finally {
                deleteTree(path);
            }
        }, "depot-scratch-cleanup");
        Runtime.getRuntime().addShutdownHook(onExit);
    }

    public Path path() {
        return path;
    }

    /** Removes the directory and everything in it, and the shutdown hook. */
    @Override
    public void close() {
        try {
            deleteTree(path);
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(onExit);
            } catch (IllegalStateException shuttingDown) {
                // the hook runs anyway and finds the directory gone
            }
        }
    }

    /**
     * Removes {@code dir} and everything in it; nothing when it does not exist.
     *
     * @throws UncheckedIOException naming the directory when something in it cannot be removed
     */
    public static void deleteTree(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot remove " + dir + ": " + e.getMessage(), e);
        }
    }
}
