package dev.depot.torture;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.UUID;
import java.util.stream.Stream;

/** A store directory of one harness run under /dev/shm ({@code PREFIX-uuid}), removed with everything in it on close. */
final class ScratchDirectory implements AutoCloseable {
    private final Path path;

    ScratchDirectory(String prefix) {
        this.path = Path.of("/dev/shm", prefix + "-" + UUID.randomUUID());
    }

    Path path() {
        return path;
    }

    @Override
    public void close() {
        if (!Files.exists(path)) {
            return;
        }
        try (Stream<Path> s = Files.walk(path)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot remove " + path, e);
        }
    }
}
