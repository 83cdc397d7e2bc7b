package dev.depot.client;

import static org.junit.jupiter.api.Assertions.*;

import dev.depot.client.testing.ClientStores;
import dev.depot.client.testing.TempStore;
import dev.depot.core.store.Store;
import dev.depot.errors.ObjectExistsException;
import dev.depot.errors.ObjectMissingException;
import dev.depot.errors.StoreFullException;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class DepotClientTest {
    private TempStore temp;
    private DepotClient depot;

    @BeforeEach
    void setUp() {
        temp = new TempStore();
        Store store = temp.create(1 << 20);
        depot = ClientStores.over(store);
    }

    @AfterEach
    void tearDown() {
        try {
            depot.close();
        } finally {
            temp.close();
        }
    }

    @Test
    void shouldPutAndGetZeroCopy() {
        ObjectId id = ObjectId.of("a");
        byte[] meta = "float64[4]".getBytes(StandardCharsets.UTF_8);
        try (ObjectWriter w = depot.create(id, 32, meta)) {
            for (int i = 0; i < 4; i++) {
                w.data().setAtIndex(ValueLayout.JAVA_DOUBLE, i, i * 1.5);
            }
            w.seal();
        }
        try (ObjectView v = depot.get(id, 0)) {
            assertEquals(32, v.size());
            assertEquals(4.5, v.data().getAtIndex(ValueLayout.JAVA_DOUBLE, 3));
            assertArrayEquals(meta, v.metadata());
            assertTrue(v.data().isReadOnly());
            assertEquals(4.5, v.asByteBuffer().order(java.nio.ByteOrder.nativeOrder()).getDouble(24));
        }
        assertTrue(depot.contains(id));
    }

    @Test
    void shouldHideUnsealedObjectsAndReportMissingAfterTimeout() {
        ObjectId id = ObjectId.random();
        try (ObjectWriter w = depot.create(id, 10)) {
            assertFalse(depot.contains(id));
            assertNull(depot.tryGet(id, 0));
            assertThrows(ObjectMissingException.class, () -> depot.get(id, 20));
        }
        // closed without seal: aborted and its space freed
        assertEquals(0, depot.stats().usedBytes());
        assertEquals(0, depot.list().size());
    }

    @Test
    void shouldStreamTheSameObjectsAsTheListing() {
        for (int i = 0; i < 50; i++) {
            depot.put(ObjectId.of("streamed-" + i), new byte[i + 1]);
        }
        java.util.List<ObjectInfo> streamed = new java.util.ArrayList<>();
        depot.forEachObject(streamed::add);
        assertEquals(50, streamed.size());
        assertEquals(new java.util.HashSet<>(depot.list()), new java.util.HashSet<>(streamed));
    }

    @Test
    void shouldRefuseDuplicateIds() {
        ObjectId id = ObjectId.of("dup");
        depot.put(id, new byte[] {1});
        assertThrows(ObjectExistsException.class, () -> depot.create(id, 1));
    }

    @Test
    void shouldDeferDeleteWhilePinned() {
        ObjectId id = ObjectId.of("pinned");
        depot.put(id, new byte[100]);
        ObjectView v = depot.get(id, 0);
        assertTrue(depot.delete(id));
        assertFalse(depot.contains(id));
        assertEquals(ObjectState.DELETE_PENDING, depot.list().getFirst().state());
        assertTrue(depot.stats().usedBytes() > 0);
        v.close();
        assertEquals(0, depot.stats().usedBytes());
        assertTrue(depot.list().isEmpty());
    }

    @Test
    void shouldEvictLeastRecentlyUsedWhenFull() throws Exception {
        long size = 200 * 1024;
        for (int i = 0; i < 5; i++) {
            depot.put(ObjectId.of("o" + i), new byte[(int) size]);
            Thread.sleep(2);
        }
        try (ObjectView keep = depot.get(ObjectId.of("o0"), 0)) {
            depot.put(ObjectId.of("o5"), new byte[(int) size]);
            assertTrue(depot.contains(ObjectId.of("o0")), "pinned object survives");
            assertFalse(depot.contains(ObjectId.of("o1")), "oldest unpinned object is evicted");
            assertTrue(depot.contains(ObjectId.of("o2")), "only as much as needed is evicted");
            assertEquals(1, depot.stats().evictionCount());
        }
    }

    @Test
    void shouldFailWithStoreFullWhenEvictionIsOff() {
        depot.put(ObjectId.of("big"), new byte[900 * 1024]);
        var e = assertThrows(StoreFullException.class,
            () -> depot.create(ObjectId.of("x"), 200 * 1024, new byte[0], DepotClient.CreateOption.NO_EVICT));
        assertTrue(e.getMessage().contains("capacity"), e.getMessage());
    }

    @Test
    void shouldGetManyWithNullsForMissing() {
        depot.put(ObjectId.of("m1"), new byte[] {1});
        List<ObjectView> views = depot.get(List.of(ObjectId.of("m1"), ObjectId.of("m2")), 10);
        assertNotNull(views.get(0));
        assertNull(views.get(1));
        views.get(0).close();
    }

    @Test
    void shouldTakeATimeoutTooLargeToRepresentAsForever() throws Exception {
        for (long huge : new long[] {Long.MAX_VALUE, Long.MAX_VALUE / 1_000_000L + 1}) {
            ObjectId id = ObjectId.random();
            var got = new java.util.concurrent.CompletableFuture<Long>();
            Thread waiter = Thread.ofPlatform().start(() -> {
                try (ObjectView v = depot.tryGet(id, huge)) {
                    got.complete(v == null ? -1L : v.size());
                } catch (Throwable t) {
                    got.completeExceptionally(t);
                }
            });
            try {
                // A deadline computed with overflow would give up at once; a wait without end is still waiting.
                assertThrows(java.util.concurrent.TimeoutException.class,
                    () -> got.get(300, java.util.concurrent.TimeUnit.MILLISECONDS), "timeout " + huge);
            } finally {
                depot.put(id, new byte[3]);
                waiter.join(10_000);
            }
            assertEquals(3L, got.getNow(-2L), "timeout " + huge);
        }
        ObjectId id = ObjectId.random();
        depot.put(id, new byte[2]);
        try (ObjectView v = depot.get(id, java.time.Duration.ofSeconds(Long.MAX_VALUE))) {
            assertEquals(2, v.size());
        }
        try (ObjectView v = depot.get(List.of(id), Long.MAX_VALUE).getFirst()) {
            assertEquals(2, v.size());
        }
    }
}
