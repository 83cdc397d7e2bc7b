package dev.depot.core.store;

import static dev.depot.core.store.StoreFixture.slot;
import static dev.depot.core.store.StoreHeaderDescriptor.PENDING_DELETES_OFFSET;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.core.heap.HeapBlockDescriptor;
import dev.depot.core.index.EntryState;
import dev.depot.core.testing.TestId;
import dev.depot.errors.ErrorCode;
import dev.depot.errors.ObjectExistsException;
import dev.depot.errors.StoreFullException;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Object lifecycle on a real store file, in one process. */
class StoreTest {
    @Test
    void shouldMakeAnObjectVisibleOnlyWhenSealed() {
        try (var f = new StoreFixture()) {
            TestId id = f.newId();
            byte[] meta = {1, 2, 3};
            long record = f.create(id, 1000, meta);
            assertEquals(EntryState.CREATING, f.stateOf(record));
            assertNull(f.pin(id), "unsealed objects are invisible");
            assertEquals(1000, f.assertConsistent().unsealedBytes());
            f.store.seal(record);
            assertEquals(EntryState.SEALED, f.stateOf(record));
            Pin pin = f.pin(id);
            assertNotNull(pin);
            assertEquals(record, pin.record());
            StoreFixture.assertPattern(id, f.store.data(pin.slot()));
            assertArrayEquals(meta, f.store.metadata(pin.slot()).toArray(ValueLayout.JAVA_BYTE));
            assertEquals(0, f.store.data(pin.slot()).address() % 64, "object data is 64-byte aligned");
            f.store.unpin(pin);
            assertEquals(1, f.assertConsistent().sealedCount());
        }
    }

    @Test
    void shouldPreTouchEveryPageOfTheHeapWithoutChangingAnObject() {
        try (var f = new StoreFixture()) {
            TestId id = f.newId();
            long record = f.create(id, 5000, new byte[0]);
            f.store.seal(record);
            long heapBytes = f.store.layout().heapLength();
            assertEquals((heapBytes + Store.PRE_TOUCH_STRIDE - 1) / Store.PRE_TOUCH_STRIDE, f.store.preTouchHeap());
            Pin pin = f.pin(id);
            StoreFixture.assertPattern(id, f.store.data(pin.slot()));
            f.store.unpin(pin);
        }
    }

    @Test
    void shouldRefuseASecondCreateOfALiveId() {
        try (var f = new StoreFixture()) {
            TestId id = f.newId();
            long record = f.create(id, 10, new byte[0]);
            var e = assertThrows(ObjectExistsException.class, () -> f.create(id, 10, new byte[0]));
            assertEquals("object " + id.text() + " exists already; ids are write-once: delete it first or use another id",
                e.getMessage());
            f.store.seal(record);
            assertThrows(ObjectExistsException.class, () -> f.create(id, 10, new byte[0]));
            assertTrue(f.delete(id));
            long again = f.put(id, 10);
            assertNotEquals(record, again, "a new object of the same id is a new generation");
        }
    }

    @Test
    void shouldRefuseToSealTwiceOrToSealAnAbortedObject() {
        try (var f = new StoreFixture()) {
            long record = f.put(f.newId(), 10);
            var e = assertThrows(IllegalStateException.class, () -> f.store.seal(record));
            assertTrue(e.getMessage().startsWith("cannot seal object in slot " + slot(record)), e.getMessage());
            long other = f.create(f.newId(), 10, new byte[0]);
            f.store.abort(other);
            assertThrows(IllegalStateException.class, () -> f.store.seal(other));
            assertThrows(IllegalStateException.class, () -> f.store.abort(other));
        }
    }

    @Test
    void shouldFreeAnAbortedObjectAtOnce() {
        try (var f = new StoreFixture()) {
            TestId id = f.newId();
            long record = f.create(id, 5000, new byte[0]);
            f.store.abort(record);
            assertEquals(EntryState.EMPTY, f.stateOf(record));
            assertNull(f.pin(id));
            assertEquals(0, f.assertConsistent().usedBytes());
            f.put(id, 5000);
        }
    }

    @Test
    void shouldDeleteAnUnpinnedObjectAtOnce() {
        try (var f = new StoreFixture()) {
            TestId id = f.newId();
            f.put(id, 3000);
            assertTrue(f.delete(id));
            assertNull(f.pin(id));
            assertFalse(f.delete(id), "deleting a missing object reports false");
            var s = f.assertConsistent();
            assertEquals(0, s.usedBytes());
            assertEquals(0, s.objectCount());
        }
    }

    @Test
    void shouldNotDeleteAnUnsealedObject() {
        try (var f = new StoreFixture()) {
            TestId id = f.newId();
            long record = f.create(id, 10, new byte[0]);
            assertFalse(f.delete(id));
            assertEquals(EntryState.CREATING, f.stateOf(record));
        }
    }

    @Test
    void shouldDeferADeleteWhilePinnedAndCompleteItOnTheLastUnpin() {
        try (var f = new StoreFixture()) {
            TestId id = f.newId();
            long record = f.put(id, 3000);
            Pin first = f.pin(id);
            Pin second = f.pin(id);
            long used = f.assertConsistent().usedBytes();
            assertTrue(f.delete(id));
            assertEquals(EntryState.DELETE_PENDING, f.stateOf(record));
            assertEquals(1, f.headerLong(PENDING_DELETES_OFFSET));
            assertNull(f.pin(id), "new readers no longer find a deleted object");
            StoreFixture.assertPattern(id, f.store.data(first.slot()));
            assertEquals(used, f.assertConsistent().usedBytes(), "space stays allocated while pinned");
            assertEquals(3000, f.store.statistics().pinnedBytes());
            f.store.unpin(first);
            assertEquals(EntryState.DELETE_PENDING, f.stateOf(record), "one pin is still held");
            f.store.unpin(second);
            assertFalse(f.stateOf(record).isLive());
            assertEquals(0, f.headerLong(PENDING_DELETES_OFFSET));
            assertEquals(0, f.assertConsistent().usedBytes());
            f.put(id, 3000);
        }
    }

    @Test
    void shouldCompleteADeferredDeleteInTheSweepWhenNoUnpinnerDid() {
        try (var f = new StoreFixture()) {
            TestId id = f.newId();
            long record = f.put(id, 3000);
            Pin pin = f.pin(id);
            assertTrue(f.delete(id));
            assertEquals(EntryState.DELETE_PENDING, f.stateOf(record));
            // The pin goes without the unpinner finishing the delete (it lost the race with the deleter).
            dev.depot.core.memory.Atomics.putLongVolatile(f.store.clients.slot(f.store.clientSlot()),
                dev.depot.core.clients.ClientTableDescriptor.pinRecordOffset(pin.position()), 0);
            f.store.sweepPendingDeletes();
            assertFalse(f.stateOf(record).isLive());
            assertEquals(0, f.headerLong(PENDING_DELETES_OFFSET));
            assertEquals(0, f.assertConsistent().usedBytes());
        }
    }

    @Test
    void shouldCountPinsPerObject() {
        try (var f = new StoreFixture()) {
            TestId id = f.newId();
            long record = f.put(id, 10);
            Pin a = f.pin(id);
            Pin b = f.pin(id);
            assertEquals(2, f.store.pinCount(record));
            assertEquals(2, f.store.list().getFirst().pins());
            f.store.unpin(a);
            f.store.unpin(b);
            assertEquals(0, f.store.pinCount(record));
        }
    }

    @Test
    void shouldListLiveObjectsWithTheirState() {
        try (var f = new StoreFixture()) {
            TestId sealed = f.newId();
            TestId unsealed = f.newId();
            f.put(sealed, 100);
            f.create(unsealed, 200, new byte[] {9});
            Map<Long, EntryState> states = new HashMap<>();
            for (ObjectEntry e : f.store.list()) {
                states.put(e.dataLength(), e.state());
            }
            assertEquals(Map.of(100L, EntryState.SEALED, 200L, EntryState.CREATING), states);
        }
    }

    @Test
    void shouldKeepStatisticsConsistentWithTheIndexUnderRandomOperations() {
        try (var f = new StoreFixture()) {
            List<TestId> sealed = new ArrayList<>();
            List<Long> unsealed = new ArrayList<>();
            List<Pin> pins = new ArrayList<>();
            for (int step = 0; step < 2000; step++) {
                int op = f.random.nextInt(10);
                try {
                    if (op < 4) {
                        TestId id = f.newId();
                        long record = f.create(id, f.random.nextInt(3000), new byte[f.random.nextInt(40)]);
                        if (f.random.nextBoolean()) {
                            f.store.seal(record);
                            sealed.add(id);
                        } else {
                            unsealed.add(record);
                        }
                    } else if (op < 5 && !unsealed.isEmpty()) {
                        long record = unsealed.remove(f.random.nextInt(unsealed.size()));
                        if (f.random.nextBoolean()) {
                            f.store.abort(record);
                        } else {
                            f.store.seal(record);
                        }
                    } else if (op < 7 && !sealed.isEmpty()) {
                        f.delete(sealed.remove(f.random.nextInt(sealed.size())));
                    } else if (op < 8 && !sealed.isEmpty()) {
                        Pin p = f.pin(sealed.get(f.random.nextInt(sealed.size())));
                        if (p != null) {
                            pins.add(p);
                        }
                    } else if (!pins.isEmpty()) {
                        f.store.unpin(pins.remove(f.random.nextInt(pins.size())));
                    }
                } catch (StoreFullException full) {
                    // Expected now and then: the heap or the index is full.
                }
                if (step % 50 == 0) {
                    f.assertConsistent();
                }
            }
            for (Pin p : pins) {
                f.store.unpin(p);
            }
            f.assertConsistent();
            assertEquals(0, f.headerLong(PENDING_DELETES_OFFSET));
        }
    }

    @Test
    void shouldSayRequestedCapacityFreeAndKeptWhenTheStoreIsFull() {
        try (var f = new StoreFixture()) {
            TestId a = f.newId();
            TestId b = f.newId();
            f.put(a, 30_000);
            f.put(b, 20_000);
            Pin pa = f.pin(a);
            Pin pb = f.pin(b);
            TestId c = f.newId();
            var e = assertThrows(StoreFullException.class,
                () -> f.store.create(c.w0(), c.w1(), c.w2(), 20_000, new byte[0], true, c.text()));
            long used = HeapBlockDescriptor.blockSizeFor(30_000, 0) + HeapBlockDescriptor.blockSizeFor(20_000, 0);
            long free = StoreFixture.CAPACITY - used;
            assertEquals("object " + c.text() + " needs 20000 bytes but does not fit even after evicting every unpinned"
                + " object: capacity " + StoreFixture.CAPACITY + ", free " + free + " (largest free block " + free
                + "), kept 0 in 0 KEEP object(s); raise --capacity, delete objects or release pinned views (`depot stat`"
                + " shows pinned bytes)", e.getMessage());
            assertEquals(ErrorCode.STORE_FULL, e.code());
            assertNotNull(f.pin(a), "pinned objects survive");
            f.store.unpin(pa);
            f.store.unpin(pb);
            f.assertConsistent();
        }
    }

    @Test
    void shouldSayWhenAnObjectIsLargerThanTheWholeStore() {
        try (var f = new StoreFixture()) {
            TestId id = f.newId();
            var e = assertThrows(StoreFullException.class,
                () -> f.store.create(id.w0(), id.w1(), id.w2(), StoreFixture.CAPACITY + 1, new byte[0], true, id.text()));
            assertTrue(e.getMessage().contains("needs " + (StoreFixture.CAPACITY + 1) + " bytes but does not fit: it is"
                + " larger than the whole store"), e.getMessage());
        }
    }

    @Test
    void shouldNotEvictAnythingForAnObjectThatCanNeverFit() {
        try (var f = new StoreFixture()) {
            TestId small = f.newId();
            f.put(small, 100);
            TestId huge = f.newId();
            // Its data fits the capacity but its block (header + data) does not: no eviction can help.
            long size = StoreFixture.CAPACITY - 10;
            assertThrows(StoreFullException.class,
                () -> f.store.create(huge.w0(), huge.w1(), huge.w2(), size, new byte[0], true, huge.text()));
            assertNotNull(f.pin(small), "nothing was evicted for a create that could never succeed");
            assertEquals(0, f.store.statistics().evictionCount());
        }
    }

    @Test
    void shouldRefuseACreateWithoutEvictionWhenTheHeapIsFull() {
        try (var f = new StoreFixture()) {
            TestId a = f.newId();
            f.put(a, 40_000);
            TestId b = f.newId();
            var e = assertThrows(StoreFullException.class,
                () -> f.store.create(b.w0(), b.w1(), b.w2(), 40_000, new byte[0], false, b.text()));
            assertTrue(e.getMessage().contains("and eviction is off for this create"), e.getMessage());
            assertNotNull(f.pin(a));
        }
    }

    @Test
    void shouldRefuseACreateWhenTheIndexHoldsItsMaximum() {
        try (var f = new StoreFixture(StoreLayout.forCapacity(StoreFixture.CAPACITY, 4, 8, 16))) {
            for (int i = 0; i < 12; i++) {
                f.put(f.newId(), 1);
            }
            TestId id = f.newId();
            var e = assertThrows(StoreFullException.class, () -> f.put(id, 1));
            assertEquals("cannot create object " + id.text() + ": the index holds 12 objects, its maximum; delete objects"
                + " or recreate the store with more --max-objects", e.getMessage());
        }
    }

    @Test
    void shouldRejectMetadataOverTheLimitAndNegativeSizes() {
        try (var f = new StoreFixture()) {
            TestId id = f.newId();
            assertThrows(IllegalArgumentException.class,
                () -> f.store.create(id.w0(), id.w1(), id.w2(), -1, new byte[0], false, id.text()));
            assertThrows(IllegalArgumentException.class, () -> f.store.create(id.w0(), id.w1(), id.w2(), 1,
                new byte[Store.MAX_METADATA_LENGTH + 1], false, id.text()));
        }
    }

    @Test
    void shouldFailLoudlyWhenUsedAfterClose() {
        var f = new StoreFixture();
        try {
            f.store.close();
            f.store.close();
            var e = assertThrows(IllegalStateException.class, () -> f.pin(f.newId()));
            assertEquals("store " + f.dir.path() + " is closed", e.getMessage());
        } finally {
            f.dir.close();
        }
    }

    @Test
    void shouldAbortUnsealedObjectsAndFreeTheClientSlotOnClose() throws Exception {
        try (var f = new StoreFixture()) {
            TestId kept = f.newId();
            f.put(kept, 100);
            f.create(f.newId(), 500, new byte[0]);
            Store second = Store.open(f.dir.path(), dev.depot.core.clients.ClientTableDescriptor.KIND_JAVA);
            int secondSlot = second.clientSlot();
            TestId abandoned = f.newId();
            second.create(abandoned.w0(), abandoned.w1(), abandoned.w2(), 700, new byte[0], false, abandoned.text());
            assertEquals(2, f.store.clients.countRegistered());
            second.close();
            assertEquals(0, f.store.clients.identity(secondSlot));
            assertEquals(1, f.store.statistics().clientCount());
            var s = f.assertConsistent();
            assertEquals(2, s.objectCount(), "the second store's unsealed object is gone, ours stay");
        }
    }
}
