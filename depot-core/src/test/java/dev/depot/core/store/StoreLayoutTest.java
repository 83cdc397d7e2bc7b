package dev.depot.core.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.core.clients.ClientTableDescriptor;
import dev.depot.core.index.IndexEntryDescriptor;
import org.junit.jupiter.api.Test;

class StoreLayoutTest {
    @Test
    void shouldLayRegionsOutInOrderWithoutOverlapAndAligned() {
        for (long capacity : new long[] {4096, 10_000, 1L << 20, 3L << 30}) {
            var l = StoreLayout.forCapacity(capacity, 128, 4096, 0);
            assertEquals(StoreHeaderDescriptor.HEADER_LENGTH, l.clientTableOffset());
            assertEquals(l.clientTableOffset() + ClientTableDescriptor.tableLength(128, 4096), l.indexOffset());
            assertTrue(l.indexOffset() + (long) l.indexSlots() * IndexEntryDescriptor.ENTRY_LENGTH <= l.heapOffset());
            assertEquals(0, l.clientTableOffset() % 128);
            assertEquals(0, l.indexOffset() % IndexEntryDescriptor.ENTRY_LENGTH);
            assertEquals(0, l.heapOffset() % StoreLayout.PAGE);
            assertEquals(0, l.heapLength() % StoreLayout.PAGE);
            assertTrue(l.heapLength() >= capacity && l.heapLength() < capacity + StoreLayout.PAGE);
            assertEquals(l.heapOffset() + l.heapLength(), l.fileLength());
        }
    }

    @Test
    void shouldDeriveAPowerOfTwoIndexBetween4KiAnd4Mi() {
        assertEquals(4096, StoreLayout.defaultIndexSlots(4096));
        assertEquals(4096, StoreLayout.defaultIndexSlots(64L << 20));
        assertEquals(1 << 16, StoreLayout.defaultIndexSlots(1L << 30));
        assertEquals(4 << 20, StoreLayout.defaultIndexSlots(1L << 50));
        assertEquals(8192, StoreLayout.defaultIndexSlots(4097L * 16 * 1024));
        assertEquals(3 * 1024, StoreLayout.forCapacity(4096, 2, 1, 4096).maxObjects());
    }

    @Test
    void shouldRejectImpossibleConfigurationsWithTheValuesGiven() {
        var e = assertThrows(IllegalArgumentException.class, () -> StoreLayout.forCapacity(4095, 2, 1, 0));
        assertEquals("capacity 4095 is below the minimum of 4096 bytes", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> StoreLayout.forCapacity(4096, 1, 1, 0));
        assertEquals("maxClients must be 2..65535 and pinsPerClient >= 1, got 1 and 1", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> StoreLayout.forCapacity(4096, 65_536, 1, 0));
        assertThrows(IllegalArgumentException.class, () -> StoreLayout.forCapacity(4096, 2, 0, 0));
        e = assertThrows(IllegalArgumentException.class, () -> StoreLayout.forCapacity(4096, 2, 1, 24));
        assertEquals("index slots must be a power of two >= 16, got 24", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> StoreLayout.forCapacity(4096, 2, 1, 8));
    }
}
