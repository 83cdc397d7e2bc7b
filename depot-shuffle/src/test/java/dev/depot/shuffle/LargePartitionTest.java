package dev.depot.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

/** A slice of more than 2 GiB, behind another slice in its map's object: sizes and offsets are longs. */
class LargePartitionTest {
    @Test
    void shouldShuffleAPartitionLargerThanTwoGiB() {
        long big = (2L << 30) + (8L << 20);
        try (ShuffleStore store = new ShuffleStore(big + (64L << 20));
             Shuffle s = Shuffle.create(store.client(), "large", 2, 2)) {
            try (ShuffleWriter w = s.writer(0, new long[] {64, big})) {
                w.partition(0).set(ValueLayout.JAVA_LONG, 56, 7);
                MemorySegment slice = w.partition(1);
                slice.set(ValueLayout.JAVA_LONG, 0, 17);
                slice.set(ValueLayout.JAVA_LONG, big - 8, 42);
                w.commit();
            }
            s.writeMap(1, java.util.List.of(MemorySegment.ofArray(new long[] {1}), MemorySegment.ofArray(new long[] {2})));
            try (ShuffleReader r = s.reader(1, 1000)) {
                assertEquals(big, r.slice(0).byteSize());
                assertEquals(17, r.slice(0).get(ValueLayout.JAVA_LONG, 0));
                assertEquals(42, r.slice(0).get(ValueLayout.JAVA_LONG, big - 8));
                assertEquals(2, r.slice(1).get(ValueLayout.JAVA_LONG, 0));
                assertEquals(big + 8, r.byteSize());
            }
            try (ShuffleReader r = s.reader(0, 1000)) {
                assertEquals(7, r.slice(0).get(ValueLayout.JAVA_LONG, 56));
            }
        }
    }
}
