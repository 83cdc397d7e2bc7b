package dev.depot.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.depot.client.testing.ChildJvm;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A slice of more than 2 GiB, behind another slice in its map's object, written by a map in another JVM: sizes
 * and offsets are longs end to end. The map writes a few words, not 2 GiB, so the test costs the store's
 * reservation (posix_fallocate of the file) and seconds, not a pass over the data; it is skipped, saying why,
 * when /dev/shm or the memory has no room for the store.
 */
class LargePartitionTest {
    /** Bytes of the large slice: 2 GiB and 8 MiB. */
    static final long BIG = (2L << 30) + (8L << 20);
    private static final long CAPACITY = BIG + (64L << 20);

    @Test
    void shouldShuffleAPartitionLargerThanTwoGiBFromAMapInAnotherJvm() throws Exception {
        assumeRoomFor(CAPACITY + (1L << 30));
        try (ShuffleStore store = new ShuffleStore(CAPACITY);
             Shuffle s = Shuffle.create(store.client(), "large", 2, 2)) {
            try (ChildJvm map = ChildJvm.start(MapTaskMain.class, store.dir().toString(), "large", "0", "0", "large")) {
                map.awaitLine("committed", 120);
                assertEquals(0, map.waitFor(60));
            }
            s.writeMap(1, List.of(MemorySegment.ofArray(new long[] {1}), MemorySegment.ofArray(new long[] {2})));
            try (ShuffleReader r = s.reader(1, 1000)) {
                assertEquals(BIG, r.slice(0).byteSize());
                assertEquals(17, r.slice(0).get(ValueLayout.JAVA_LONG, 0));
                assertEquals(42, r.slice(0).get(ValueLayout.JAVA_LONG, (1L << 31) - 8), "the word at 2 GiB - 8");
                assertEquals(43, r.slice(0).get(ValueLayout.JAVA_LONG, 1L << 31), "the word at 2 GiB");
                assertEquals(44, r.slice(0).get(ValueLayout.JAVA_LONG, BIG - 8));
                assertEquals(2, r.slice(1).get(ValueLayout.JAVA_LONG, 0));
                assertEquals(BIG + 8, r.byteSize());
            }
            try (ShuffleReader r = s.reader(0, 1000)) {
                assertEquals(64, r.slice(0).byteSize());
                assertEquals(7, r.slice(0).get(ValueLayout.JAVA_LONG, 56));
            }
        }
    }

    /** Map 0's part of the test, in the child JVM: a 64-byte slice, then the large one. */
    static void writeLargeMap(Shuffle s, int map) {
        try (ShuffleWriter w = s.writer(map, new long[] {64, BIG})) {
            w.partition(0).set(ValueLayout.JAVA_LONG, 56, 7);
            MemorySegment slice = w.partition(1);
            slice.set(ValueLayout.JAVA_LONG, 0, 17);
            slice.set(ValueLayout.JAVA_LONG, (1L << 31) - 8, 42);
            slice.set(ValueLayout.JAVA_LONG, 1L << 31, 43);
            slice.set(ValueLayout.JAVA_LONG, BIG - 8, 44);
            w.commit();
        }
    }

    private static void assumeRoomFor(long bytes) throws IOException {
        long shm = Files.getFileStore(Path.of("/dev/shm")).getUsableSpace();
        long available = 0;
        for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
            if (line.startsWith("MemAvailable:")) {
                available = Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
            }
        }
        assumeTrue(shm >= bytes && available >= bytes, "a " + (CAPACITY >> 20) + " MiB store needs " + (bytes >> 20)
            + " MiB free in /dev/shm and in memory; /dev/shm has " + (shm >> 20) + " MiB, MemAvailable is "
            + (available >> 20) + " MiB");
    }
}
