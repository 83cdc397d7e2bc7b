package dev.depot.core.store;

import static dev.depot.core.store.StoreHeaderDescriptor.SPACE_WAITERS_OFFSET;
import static dev.depot.core.testing.SpinUntil.spinUntil;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.core.index.EntryState;
import dev.depot.core.memory.Atomics;
import dev.depot.core.testing.TestId;
import dev.depot.errors.StoreFullException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Creates that wait for room on the space futex word. The timeouts only bound a broken build; nothing asserts on
 * how long anything took.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BlockingCreateTest {
    private static ExecutorService daemonPool() {
        return Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "blocked-create");
            t.setDaemon(true);
            return t;
        });
    }

    private static void awaitSpaceWaiter(StoreFixture f) {
        spinUntil(() -> Atomics.getIntVolatile(f.store.header, SPACE_WAITERS_OFFSET) > 0,
            "a create counting itself in SPACE_WAITERS");
    }

    private static long createWaiting(StoreFixture f, TestId id, long size, int flags, long timeoutNanos) {
        return f.store.create(id.w0(), id.w1(), id.w2(), size, new byte[0], flags, timeoutNanos, id.text());
    }

    @Test
    void shouldWakeACreateWithoutEvictionWhenAnotherThreadDeletes() throws Exception {
        ExecutorService pool = daemonPool();
        try (var f = new StoreFixture()) {
            TestId a = f.newId();
            f.put(a, 40_000);
            TestId b = f.newId();
            Future<Long> waiter = pool.submit(() -> createWaiting(f, b, 40_000, Store.CREATE_NO_EVICT, -1));
            awaitSpaceWaiter(f);
            assertTrue(f.delete(a));
            long record = waiter.get();
            assertEquals(EntryState.CREATING, f.stateOf(record));
            f.store.seal(record);
            assertNotNull(f.pin(b));
            f.assertConsistent();
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void shouldWakeACreateWaitingForeverWhenADeleteUnderTheLockDefersTheWakeToTheRelease() throws Exception {
        ExecutorService pool = daemonPool();
        try (var f = new StoreFixture()) {
            TestId a = f.newId();
            f.put(a, 40_000);
            TestId b = f.newId();
            Future<Long> waiter = pool.submit(() -> createWaiting(f, b, 40_000, Store.CREATE_NO_EVICT, -1));
            awaitSpaceWaiter(f);
            // Free under the lock as a delete does: the wake must come from the release (the waiter has no timeout).
            f.store.heapLock.lockAndRecover();
            try {
                f.store.heapLock.freeEntryUnderLock(f.store.index().findBlocking(a.w0(), a.w1(), a.w2()));
            } finally {
                f.store.heapLock.release();
            }
            f.store.seal(waiter.get());
            assertNotNull(f.pin(b));
            f.assertConsistent();
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void shouldRefuseToDeferASpaceWakeWithoutHoldingTheLock() {
        try (var f = new StoreFixture()) {
            assertThrows(IllegalStateException.class, () -> f.store.lock.wakeSpaceWaitersOnRelease());
        }
    }

    @Test
    void shouldWakeAnEvictingCreateWhenTheLastPinIsReleased() throws Exception {
        ExecutorService pool = daemonPool();
        try (var f = new StoreFixture()) {
            TestId a = f.newId();
            f.put(a, 40_000);
            Pin pin = f.pin(a);
            TestId b = f.newId();
            Future<Long> waiter = pool.submit(() -> createWaiting(f, b, 40_000, 0, -1));
            awaitSpaceWaiter(f);
            f.store.unpin(pin);
            f.store.seal(waiter.get());
            assertEquals(null, f.pin(a), "the released object was evicted for the waiting create");
            f.assertConsistent();
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void shouldFailWithTheFiguresAfterTheTimeoutWhenNothingIsFreed() {
        try (var f = new StoreFixture()) {
            TestId a = f.newId();
            f.put(a, 40_000);
            TestId b = f.newId();
            var e = assertThrows(StoreFullException.class,
                () -> createWaiting(f, b, 40_000, Store.CREATE_NO_EVICT, 50_000_000L));
            assertTrue(e.getMessage().startsWith("object " + b.text() + " needs 40000 bytes but does not fit and"
                + " eviction is off for this create: capacity " + StoreFixture.CAPACITY), e.getMessage());
            assertEquals(0, Atomics.getIntVolatile(f.store.header, SPACE_WAITERS_OFFSET));
            assertNotNull(f.pin(a));
        }
    }

    @Test
    void shouldCountKeptObjectsAndNeverEvictThem() {
        try (var f = new StoreFixture()) {
            TestId kept = f.newId();
            long record = f.store.create(kept.w0(), kept.w1(), kept.w2(), 40_000, new byte[0], Store.CREATE_KEEP, 0,
                kept.text());
            f.store.seal(record);
            StoreStatistics s = f.store.statistics();
            assertEquals(1, s.keptObjects());
            assertEquals(dev.depot.core.heap.HeapBlockDescriptor.blockSizeFor(40_000, 0), s.keptBytes());
            TestId other = f.newId();
            var e = assertThrows(StoreFullException.class,
                () -> f.store.create(other.w0(), other.w1(), other.w2(), 40_000, new byte[0], true, other.text()));
            assertTrue(e.getMessage().contains("kept " + s.keptBytes() + " in 1 KEEP object(s)"), e.getMessage());
            assertEquals(0, f.store.evict(1 << 20), "a KEEP object is never evicted");
            Pin pin = f.pin(kept);
            assertNotNull(pin);
            f.store.unpin(pin);
            assertTrue(f.delete(kept));
            assertEquals(0, f.store.statistics().keptObjects());
            assertEquals(0, f.store.statistics().keptBytes());
            f.assertConsistent();
        }
    }

    @Test
    void shouldKeepTheKeepFlagAndItsCountersThroughARebuild() {
        try (var f = new StoreFixture()) {
            TestId kept = f.newId();
            f.store.seal(f.store.create(kept.w0(), kept.w1(), kept.w2(), 1000, new byte[0], Store.CREATE_KEEP, 0,
                kept.text()));
            f.store.recover();
            assertEquals(1, f.store.statistics().keptObjects());
            assertEquals(0, f.store.evict(1 << 20));
            assertNotNull(f.pin(kept));
        }
    }
}
