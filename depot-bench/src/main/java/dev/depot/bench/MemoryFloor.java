package dev.depot.bench;

import dev.depot.core.store.ScratchDirectory;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.SplittableRandom;
import org.HdrHistogram.Histogram;

/**
 * What the memory system alone costs, for the scale benchmark's limits: a lookup in a large index cannot be
 * cheaper than one random read from a mapping of that size, and a process that maps a store cannot touch its
 * pages faster than the kernel maps them. Both are measured on a file in /dev/shm, like a store's.
 */
final class MemoryFloor {
    private static final int PAGE = 4096;

    private MemoryFloor() {
    }

    /**
     * The p50 in nanoseconds of one 8-byte read at a random position of a resident mapping of {@code length}
     * bytes, timed one read at a time as the benchmark times a get (the clock's own cost included).
     */
    static long randomReadP50Nanos(long length, int samples) throws IOException {
        try (ScratchDirectory dir = new ScratchDirectory(BenchStore.prefix() + "floor-");
             Arena arena = Arena.ofShared()) {
            MemorySegment m = map(dir.path().resolve("region"), length, arena);
            for (long p = 0; p < length; p += PAGE) {
                m.set(ValueLayout.JAVA_LONG, p, p); // resident, as a store's index is
            }
            Histogram h = Latencies.histogram();
            SplittableRandom random = new SplittableRandom(11);
            long sink = 0;
            for (int i = 0; i < samples; i++) {
                long at = random.nextLong(length / Long.BYTES) * Long.BYTES;
                long t0 = System.nanoTime();
                sink += m.get(ValueLayout.JAVA_LONG, at);
                Latencies.record(h, System.nanoTime() - t0);
            }
            if (sink == 42) {
                System.out.print(""); // keeps the reads
            }
            return h.getValueAtPercentile(50);
        }
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
