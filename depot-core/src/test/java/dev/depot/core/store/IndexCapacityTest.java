package dev.depot.core.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.core.clients.ClientTableDescriptor;
import dev.depot.core.testing.TestId;
import dev.depot.errors.StoreFullException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** An index filled to its limit and emptied again, round after round, leaks neither index slots nor heap. */
class IndexCapacityTest {
    private static final int INDEX_SLOTS = 1 << 14;
    private static final long CAPACITY = 8L << 20;
    private static final int ROUNDS = 4;

    @Test
    void shouldHoldItsLimitOfObjectsAgainAfterEveryRoundOfFillingAndEmptying() {
        var layout = StoreLayout.forCapacity(CAPACITY, 4, ClientTableDescriptor.DEFAULT_PINS_PER_CLIENT, INDEX_SLOTS);
        long limit = layout.maxObjects();
        try (var f = new StoreFixture(layout)) {
            for (int round = 0; round < ROUNDS; round++) {
                List<TestId> ids = new ArrayList<>();
                for (long i = 0; i < limit; i++) {
                    TestId id = f.newId();
                    f.put(id, 1 + (i + round) % 200);
                    ids.add(id);
                }
                TestId oneMore = f.newId();
                var full = assertThrows(StoreFullException.class, () -> f.put(oneMore, 1));
                assertTrue(full.getMessage().contains("the index holds " + limit + " objects, its maximum"),
                    full.getMessage());
                assertEquals(limit, f.assertConsistent().objectCount(), "round " + round);
                // every object is still there and intact at the limit
                for (TestId id : ids) {
                    var pin = f.pin(id);
                    assertNotNull(pin, id.text());
                    StoreFixture.assertPattern(id, f.store.data(pin.slot()));
                    f.store.unpin(pin);
                }
                for (TestId id : ids) {
                    assertTrue(f.delete(id), id.text());
                }
                var empty = f.assertConsistent();
                assertEquals(0, empty.objectCount(), "round " + round);
                assertEquals(0, empty.usedBytes(), "round " + round);
                assertEquals(CAPACITY, empty.freeBytes(), "round " + round);
                assertEquals(CAPACITY, empty.largestFreeBlock(), "round " + round + ": the free space is one block again");
            }
        }
    }
}
