package dev.depot.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.core.index.IndexEntryDescriptor;
import org.junit.jupiter.api.Test;

class ServeCommandTest {
    @Test
    void shouldSizeTheIndexSoThatMaxObjectsFit() {
        assertEquals(16, ServeCommand.indexSlotsFor(1));
        assertEquals(16, ServeCommand.indexSlotsFor(12));
        assertEquals(32, ServeCommand.indexSlotsFor(13));
        assertEquals(256, ServeCommand.indexSlotsFor(100));
        assertEquals(4096, ServeCommand.indexSlotsFor(3072));
        assertEquals(8192, ServeCommand.indexSlotsFor(3073));
        for (long n : new long[] {1, 7, 12, 13, 100, 1000, 3072, 3073, 1_000_000}) {
            int slots = ServeCommand.indexSlotsFor(n);
            assertEquals(1, Integer.bitCount(slots), () -> n + " -> " + slots);
            assertTrue(IndexEntryDescriptor.maxObjects(slots) >= n, () -> n + " -> " + slots);
            assertTrue(slots == 16 || IndexEntryDescriptor.maxObjects(slots / 2) < n, () -> n + " -> " + slots);
        }
    }

    @Test
    void shouldRejectMaxObjectsOutOfRange() {
        assertThrows(UsageException.class, () -> ServeCommand.indexSlotsFor(0));
        assertThrows(UsageException.class, () -> ServeCommand.indexSlotsFor(-5));
        assertThrows(UsageException.class, () -> ServeCommand.indexSlotsFor(1L << 40));
    }
}
