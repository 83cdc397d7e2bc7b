package dev.depot.client.testing;

import dev.depot.core.clients.ClientTableDescriptor;
import dev.depot.core.store.Store;
import dev.depot.core.store.StoreLayout;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.UUID;
import java.util.stream.Stream;

/**
 * A store directory unique to one test under /dev/shm ({@code depot-test-*}), removed on close (also when the
 * test failed: use it in try-with-resources or close it in {@code @AfterEach}).
 */
public final class TempStore implements AutoCloseable {
    private final Path dir;

    public TempStore() {
        this.dir = Path.of("/dev/shm", "depot-test-" + UUID.randomUUID());
    }

    public Path dir() {
        return dir;
    }

    /** Creates the store file with the given heap capacity and default tables; returns the creator's store. */
    public Store create(long capacity) {
        return create(StoreLayout.forCapacity(capacity, ClientTableDescriptor.DEFAULT_MAX_CLIENTS, 256, 0));
    }

    public Store create(StoreLayout layout) {
        try {
            return Store.create(dir, layout, ClientTableDescriptor.KIND_JAVA);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        delete(dir);
    }

    public static void delete(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
