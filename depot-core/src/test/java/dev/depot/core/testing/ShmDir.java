package dev.depot.core.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.UUID;
import java.util.stream.Stream;

/**
 * A directory unique to one test, {@code /dev/shm/depot-test-<uuid>} (not created: the store creates it), deleted
 * recursively on close. Use it in try-with-resources so that it goes also when the test fails.
 */
public final class ShmDir implements AutoCloseable {
    private final Path dir = Path.of("/dev/shm", "depot-test-" + UUID.randomUUID());

    public Path path() {
        return dir;
    }

    /** Creates the directory with mode 0700, as a store directory must be; returns it. */
    public Path createPrivate() {
        try {
            return Files.createDirectory(dir, java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                java.nio.file.attribute.PosixFilePermissions.fromString("rwx------")));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
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
