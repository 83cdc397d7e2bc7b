package dev.depot.bench;

import dev.depot.core.store.ScratchDirectory;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * What the memory system alone costs a daemon's recovery, for the scale benchmark's limit: a process that maps a
 * store cannot touch its pages faster than the kernel maps them. Measured on a file in /dev/shm, like a store's.
 * The get's floor is {@link LookupFloor}.
 */
final class MemoryFloor {
    private static final int PAGE = 4096;

    private MemoryFloor() {
    }

    /**
     * Nanoseconds that a fresh mapping of a resident file of {@code length} bytes takes to touch each of its
     * pages once: the floor of a daemon's recovery, which reads the index and writes each block's header.
     */
    static long firstTouchNanos(long length) throws IOException {
        try (ScratchDirectory dir = new ScratchDirectory(BenchStore.prefix() + "floor-")) {
            Path file = dir.path().resolve("region");
            try (Arena arena = Arena.ofShared()) {
                MemorySegment m = map(file, length, arena);
                for (long p = 0; p < length; p += PAGE) {
                    m.set(ValueLayout.JAVA_BYTE, p, (byte) 1); // the pages exist before the timed mapping
                }
            }
            try (Arena arena = Arena.ofShared()) {
                MemorySegment m = map(file, length, arena);
                long t0 = System.nanoTime();
                for (long p = 0; p < length; p += PAGE) {
                    m.set(ValueLayout.JAVA_BYTE, p, (byte) 2);
                }
                return System.nanoTime() - t0;
            }
        }
    }

    private static MemorySegment map(Path file, long length, Arena arena) throws IOException {
        java.nio.file.Files.createDirectories(file.getParent());
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            if (ch.size() < length) {
                ch.write(java.nio.ByteBuffer.wrap(new byte[1]), length - 1);
            }
            return ch.map(FileChannel.MapMode.READ_WRITE, 0, length, arena);
        }
    }
}
