package dev.depot.client;

import static org.junit.jupiter.api.Assertions.*;

import dev.depot.client.testing.ClientStores;
import dev.depot.client.testing.TempStore;
import dev.depot.core.store.StoreLayout;
import dev.depot.errors.ErrorCode;
import dev.depot.errors.ResourceLimitException;
import dev.depot.errors.StoreFullException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Full stores and full tables are clear errors, and the store keeps working afterwards. */
class ExhaustionTest {
    @Test
    void shouldRefuseCreateWhenEveryObjectIsPinnedAndRecoverAfterRelease() {
        try (TempStore temp = new TempStore(); DepotClient depot = ClientStores.over(temp.create(1 << 20))) {
            List<ObjectView> pinned = new ArrayList<>();
            for (int i = 0; i < 7; i++) {
                depot.put(ObjectId.of("o" + i), new byte[128 * 1024]);
                pinned.add(depot.get(ObjectId.of("o" + i), 0));
            }
            var e = assertThrows(StoreFullException.class, () -> depot.create(ObjectId.of("new"), 256 * 1024));
            // Figures from counters (no scan under the lock); pinned bytes are for `depot stat`.
            assertTrue(e.getMessage().contains("even after evicting every unpinned object"), e.getMessage());
            assertTrue(e.getMessage().contains("`depot stat` shows pinned bytes"), e.getMessage());
            assertTrue(e.getMessage().contains("capacity " + (1 << 20)), e.getMessage());
            assertEquals(ErrorCode.STORE_FULL, e.code());
            // Still working: reads go on, and releasing pins lets the create evict and succeed.
            assertTrue(depot.contains(ObjectId.of("o3")));
            pinned.forEach(ObjectView::close);
            depot.put(ObjectId.of("new"), new byte[256 * 1024]);
            assertTrue(depot.contains(ObjectId.of("new")));
        }
    }

    @Test
    void shouldRefuseClientsBeyondTheTableAndAdmitTheNextOnceOneLeaves() {
        try (TempStore temp = new TempStore();
             DepotClient first = ClientStores.over(temp.create(StoreLayout.forCapacity(1 << 20, 2, 16, 0)))) {
            DepotClient second = DepotClient.open(temp.dir());
            var e = assertThrows(ResourceLimitException.class, () -> DepotClient.open(temp.dir()));
            assertEquals(ErrorCode.TOO_MANY_CLIENTS, e.code());
            assertTrue(e.getMessage().contains("all 2 client slots"), e.getMessage());
            second.close();
            try (DepotClient third = DepotClient.open(temp.dir())) {
                third.put(ObjectId.of("ok"), new byte[1]);
                assertTrue(first.contains(ObjectId.of("ok")));
            }
        }
    }

    @Test
    void shouldRefuseMorePinsThanAClientMayHold() {
        try (TempStore temp = new TempStore();
             DepotClient depot = ClientStores.over(temp.create(StoreLayout.forCapacity(1 << 20, 4, 4, 0)))) {
            depot.put(ObjectId.of("x"), new byte[1]);
            List<ObjectView> views = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                views.add(depot.get(ObjectId.of("x"), 0));
            }
            var e = assertThrows(ResourceLimitException.class, () -> depot.get(ObjectId.of("x"), 0));
            assertEquals(ErrorCode.TOO_MANY_PINS, e.code());
            views.forEach(ObjectView::close);
            depot.get(ObjectId.of("x"), 0).close();
        }
    }
}
