package dev.depot.core.store;

import static dev.depot.core.store.StoreFixture.slot;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.core.heap.HeapBlockDescriptor;
import dev.depot.core.testing.TestId;
import dev.depot.errors.StoreFullException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class EvictionTest {
    private static final long BLOCK_1000 = HeapBlockDescriptor.blockSizeFor(1000, 0);

    /** Puts objects of {@code size} bytes whose last accesses are the given (old) times. */
    private static List<TestId> putWithAccessTimes(StoreFixture f, long size, long... accessMillis) {
        List<TestId> ids = new ArrayList<>();
        for (long t : accessMillis) {
            TestId id = f.newId();
            f.store.index.touch(slot(f.put(id, size)), t);
            ids.add(id);
        }
        return ids;
    }

    /** Present without touching it (a pin would count as a use). */
    private static boolean present(StoreFixture f, TestId id) {
        return f.store.index.findSealed(id.w0(), id.w1(), id.w2()) != 0;
    }

    @Test
    void shouldEvictLeastRecentlyUsedFirstAndOnlyAsMuchAsAsked() {
        try (var f = new StoreFixture()) {
            List<TestId> ids = putWithAccessTimes(f, 1000, 4000, 1000, 3000, 2000);
            assertEquals(BLOCK_1000, f.store.evict(1));
            assertEquals(List.of(true, false, true, true), ids.stream().map(id -> present(f, id)).toList());
            assertEquals(2 * BLOCK_1000, f.store.evict(BLOCK_1000 + 1));
            assertEquals(List.of(true, false, false, false), ids.stream().map(id -> present(f, id)).toList());
            var s = f.assertConsistent();
            assertEquals(3, s.evictionCount());
            assertEquals(3 * BLOCK_1000, s.evictedBytes());
        }
    }

    @Test
    void shouldEvictOnlyOneObjectForACreateThatNeedsOneBlock() {
        try (var f = new StoreFixture()) {
            long size = 7000;
            long block = HeapBlockDescriptor.blockSizeFor(size, 0);
            int n = (int) (StoreFixture.CAPACITY / block);
            long[] times = new long[n];
            java.util.Arrays.fill(times, 1000);
            List<TestId> ids = putWithAccessTimes(f, size, times);
            TestId id = f.newId();
            f.store.seal(f.store.create(id.w0(), id.w1(), id.w2(), size, new byte[0], true, id.text()));
            assertEquals(n - 1, ids.stream().filter(i -> present(f, i)).count());
            assertEquals(1, f.store.statistics().evictionCount());
            f.assertConsistent();
        }
    }

    @Test
    void shouldEvictTheNeighbourOfAFreeGapRatherThanAnotherWholeBlock() {
        try (var f = new StoreFixture()) {
            long size = 7000;
            long block = HeapBlockDescriptor.blockSizeFor(size, 0);
            int n = (int) (StoreFixture.CAPACITY / block);
            long[] times = new long[n];
            java.util.Arrays.fill(times, 1000);
            List<TestId> ids = putWithAccessTimes(f, size, times);
            // A gap of one block in the middle; the create needs a block and a half.
            assertTrue(f.delete(ids.get(n / 2)));
            TestId id = f.newId();
            f.store.seal(f.store.create(id.w0(), id.w1(), id.w2(), size + block / 2, new byte[0], true, id.text()));
            assertEquals(1, f.store.statistics().evictionCount(), "one neighbour of the gap goes, nothing else");
            assertEquals(n - 2, ids.stream().filter(i -> present(f, i)).count());
            f.assertConsistent();
        }
    }

    @Test
    void shouldPreferAWindowOfOneObjectToOneOfSeveralThatEvictsAlmostAsLittle() {
        try (var f = new StoreFixture()) {
            long recent = Long.MAX_VALUE / 2;
            // Address order follows creation order here (all are small: placed from the top, downwards), so
            // A1..A4 lie side by side and B lies alone between objects in use.
            putWithAccessTimes(f, 1000, recent, recent);
            List<TestId> a = putWithAccessTimes(f, 1000, 1000, 1000, 1000, 1000);
            putWithAccessTimes(f, 1000, recent);
            List<TestId> b = putWithAccessTimes(f, 4300, 1000);
            List<TestId> fillers = new ArrayList<>();
            for (long size : new long[] {3000, 1000}) {
                while (f.store.allocator.largestFreeBlock() >= HeapBlockDescriptor.blockSizeFor(size, 0)) {
                    fillers.addAll(putWithAccessTimes(f, size, recent));
                }
            }
            // A gap of A's four blocks exactly: A evicts 4 x 1,088 = 4,352 bytes, B one block of 4,416.
            long need = 4 * BLOCK_1000 - HeapBlockDescriptor.HEADER_LENGTH;
            TestId id = f.newId();
            f.store.seal(f.store.create(id.w0(), id.w1(), id.w2(), need, new byte[0], true, id.text()));
            assertEquals(1, f.store.statistics().evictionCount(), "one victim, not four");
            assertTrue(!present(f, b.get(0)), "B went");
            assertTrue(a.stream().allMatch(i -> present(f, i)), "A stayed");
            assertTrue(fillers.stream().allMatch(i -> present(f, i)), "objects in use stayed");
            f.assertConsistent();
        }
    }

    @Test
    void shouldNeverEvictTheObjectReadBeforeEachCreate() {
        try (var f = new StoreFixture()) {
            long size = 7000;
            long block = HeapBlockDescriptor.blockSizeFor(size, 0);
            int n = (int) (StoreFixture.CAPACITY / block);
            long[] times = new long[n];
            java.util.Arrays.fill(times, 1000);
            List<TestId> ids = putWithAccessTimes(f, size, times);
            for (int round = 0; round < n - 1; round++) {
                // Read the first object before every create: it is never the victim.
                f.store.unpin(f.pin(ids.get(0)));
                f.store.index.touch(StoreFixture.slot(f.store.index.findSealed(ids.get(0).w0(), ids.get(0).w1(),
                    ids.get(0).w2())), Long.MAX_VALUE / 2);
                TestId id = f.newId();
                f.store.seal(f.store.create(id.w0(), id.w1(), id.w2(), size, new byte[0], true, id.text()));
            }
            assertTrue(present(f, ids.get(0)), "the object read before each create survived");
            f.assertConsistent();
        }
    }

    /**
     * A fresh 64 MiB store holding ten 5 MiB objects: the first two are read (pinned and released), then four
     * more are put. The evictions the puts need take unread objects, oldest first; the two read survive.
     */
    @Test
    void shouldKeepObjectsReadAfterOthersWereWrittenOverThoseObjects() {
        long size = 5L << 20;
        try (var f = new StoreFixture(StoreLayout.forCapacity(64L << 20, 8, 64, 1024))) {
            List<TestId> ids = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                TestId id = f.newId();
                f.put(id, size);
                ids.add(id);
            }
            for (TestId id : ids.subList(0, 2)) {
                f.store.unpin(f.pin(id));
            }
            List<TestId> later = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                TestId id = f.newId();
                f.store.seal(f.store.create(id.w0(), id.w1(), id.w2(), size, new byte[0], true, id.text()));
                later.add(id);
            }
            long evictions = f.store.statistics().evictionCount();
            assertTrue(evictions > 0, "the store filled up");
            assertEquals(List.of(true, true), ids.subList(0, 2).stream().map(id -> present(f, id)).toList(),
                "the two objects read survive");
            List<Boolean> unread = ids.subList(2, 10).stream().map(id -> present(f, id)).toList();
            for (int i = 0; i < unread.size(); i++) {
                assertEquals(i >= evictions, unread.get(i), "unread object " + (i + 2) + " of 10 (" + evictions
                    + " evicted, oldest first): " + unread);
            }
            assertTrue(later.stream().allMatch(id -> present(f, id)));
            f.assertConsistent();
        }
    }

    @Test
    void shouldNeverEvictPinnedObjects() {
        try (var f = new StoreFixture()) {
            List<TestId> ids = putWithAccessTimes(f, 1000, 1000, 2000, 3000);
            Pin pinned = f.pin(ids.get(0));
            f.store.index.touch(pinned.slot(), 1000);
            assertEquals(2 * BLOCK_1000, f.store.evict(Long.MAX_VALUE));
            assertTrue(present(f, ids.get(0)));
            assertEquals(0, f.store.evict(Long.MAX_VALUE), "nothing evictable is left");
            TestId big = f.newId();
            assertThrows(StoreFullException.class, () -> f.store.create(big.w0(), big.w1(), big.w2(),
                StoreFixture.CAPACITY - 1000, new byte[0], true, big.text()));
            StoreFixture.assertPattern(ids.get(0), f.store.data(pinned.slot()));
            f.store.unpin(pinned);
            assertEquals(BLOCK_1000, f.store.evict(1), "unpinned, it is evictable again");
            f.assertConsistent();
        }
    }

    @Test
    void shouldCountAReadAsARecentUse() {
        try (var f = new StoreFixture()) {
            List<TestId> ids = putWithAccessTimes(f, 1000, 1000, 2000);
            Pin p = f.pin(ids.get(0));
            assertNotNull(p);
            f.store.unpin(p);
            f.store.evict(1);
            assertTrue(present(f, ids.get(0)), "read just now");
            assertTrue(!present(f, ids.get(1)));
        }
    }

    @Test
    void shouldRecordAUseWhenThePinIsReleasedAndNotWhenItIsTaken() {
        try (var f = new StoreFixture()) {
            TestId id = putWithAccessTimes(f, 1000, 1000).get(0);
            Pin p = f.pin(id);
            assertEquals(1000, f.store.index.lastUseMicros(p.slot()), "a get stores nothing to the entry");
            long before = dev.depot.core.index.ObjectIndex.nowMicros();
            f.store.unpin(p);
            long recorded = f.store.index.lastUseMicros(p.slot());
            assertTrue(recorded >= before, "the release records the use: " + recorded + " < " + before);
            // A use recorded in the future is less than the interval old whenever the release comes.
            long ahead = recorded + 60_000_000L;
            Pin again = f.pin(id);
            f.store.index.touch(again.slot(), ahead);
            f.store.unpin(again);
            assertEquals(ahead, f.store.index.lastUseMicros(again.slot()),
                "a release less than the interval after the last recorded use stores nothing");
        }
    }

    @Test
    void shouldNotEvictUnsealedObjects() {
        try (var f = new StoreFixture()) {
            long record = f.create(f.newId(), 1000, new byte[0]);
            assertEquals(0, f.store.evict(Long.MAX_VALUE));
            f.store.seal(record);
            assertEquals(BLOCK_1000, f.store.evict(Long.MAX_VALUE));
        }
    }
    @Test
    void shouldEvictTheLeastRecentlyUsedObjectWhenTheIndexIsFull() {
        try (var f = new StoreFixture(StoreLayout.forCapacity(StoreFixture.CAPACITY, 4, 8, 16))) {
            long[] times = new long[12];
            for (int i = 0; i < times.length; i++) {
                times[i] = i == 5 ? 1000 : 2000 + i;
            }
            List<TestId> ids = putWithAccessTimes(f, 10, times);
            TestId id = f.newId();
            f.store.seal(f.store.create(id.w0(), id.w1(), id.w2(), 10, new byte[0], true, id.text()));
            for (int i = 0; i < ids.size(); i++) {
                assertEquals(i != 5, present(f, ids.get(i)), "object " + i);
            }
            assertTrue(present(f, id));
            assertEquals(1, f.assertConsistent().evictionCount());
        }
    }
}
