package dev.depot.client.testing;

import dev.depot.core.clients.ClientTableDescriptor;
import dev.depot.core.store.ScratchDirectory;
import dev.depot.core.store.Store;
import dev.depot.core.store.StoreLayout;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;

/**
 * A store directory unique to one test under /dev/shm ({@code depot-test-*}), removed on close (also when the
 * test failed: use it in try-with-resources or close it in {@code @AfterEach}) or when the JVM stops first
 * (a {@link ScratchDirectory}).
 */
public final class TempStore implements AutoCloseable {
    private final ScratchDirectory scratch = new ScratchDirectory("depot-test");

    public Path dir() {
        return scratch.path();
    }

    /** Creates the store file with the given heap capacity and default tables; returns the creator's store. */
    public Store create(long capacity) {
        return create(StoreLayout.forCapacity(capacity, ClientTableDescriptor.DEFAULT_MAX_CLIENTS, 256, 0));
    }

    public Store create(StoreLayout layout) {
        try {
            return Store.create(dir(), layout, ClientTableDescriptor.KIND_JAVA);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        scratch.close();
    }

    /** Removes {@code dir} and everything in it ({@link ScratchDirectory#deleteTree}). */
    public static void delete(Path dir) {
        ScratchDirectory.deleteTree(dir);
    }
}
