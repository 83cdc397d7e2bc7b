package dev.depot.core.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.core.testing.TestId;
import dev.depot.errors.StoreFullException;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Threads of one process share one client slot, and so one allocator-lock identity. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class StoreThreadsTest {
    private static final int THREADS = 4;

    @Test
    void shouldLetThreadsOfOneProcessCreateAndDeleteConcurrently() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        try (var f = new StoreFixture(StoreLayout.forCapacity(1 << 20, 4, 256, 4096))) {
            CyclicBarrier start = new CyclicBarrier(THREADS);
            List<Future<Integer>> results = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                long seed = t;
                results.add(pool.submit(() -> {
                    var random = new SplittableRandom(seed);
                    start.await();
                    int done = 0;
                    for (int i = 0; i < 1000; i++) {
                        TestId id = TestId.random(random);
                        try {
                            long record = f.store.create(id.w0(), id.w1(), id.w2(), random.nextInt(2000), new byte[0],
                                true, id.text());
                            f.store.seal(record);
                        } catch (StoreFullException e) {
                            continue;
                        }
                        if (random.nextBoolean()) {
                            f.store.delete(id.w0(), id.w1(), id.w2());
                        }
                        if (i % 16 == 0) {
                            f.store.statistics();
                        }
                        done++;
                    }
                    return done;
                }));
            }
            int done = 0;
            for (Future<Integer> r : results) {
                done += r.get();
            }
            assertEquals(THREADS * 1000, done);
            assertTrue(f.assertConsistent().evictionCount() > 0, "the heap was oversubscribed, so creates evicted");
        } finally {
            pool.shutdownNow();
        }
    }
    @Test
    void shouldFinishADeleteRacingTheLastUnpinWithoutTheSweep() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try (var f = new StoreFixture()) {
            CyclicBarrier start = new CyclicBarrier(2);
            var random = new SplittableRandom(5);
            for (int i = 0; i < 3000; i++) {
                TestId id = TestId.random(random);
                long record = f.put(id, 100);
                Pin pin = f.pin(id);
                Future<?> unpinner = pool.submit(() -> {
                    start.await();
                    f.store.unpin(pin);
                    return null;
                });
                Future<Boolean> deleter = pool.submit(() -> {
                    start.await();
                    return f.delete(id);
                });
                unpinner.get();
                assertTrue(deleter.get());
                assertEquals(false, f.stateOf(record).isLive(), "iteration " + i + ": delete left " + f.stateOf(record));
            }
            f.assertConsistent();
        } finally {
            pool.shutdownNow();
        }
    }
    @Test
    void shouldDeleteAPinnedObjectThatAnEvictionIsLookingAt() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try (var f = new StoreFixture()) {
            CyclicBarrier start = new CyclicBarrier(2);
            var random = new SplittableRandom(6);
            for (int i = 0; i < 3000; i++) {
                TestId id = TestId.random(random);
                long record = f.put(id, 100);
                Pin pin = f.pin(id);
                Future<Long> evictor = pool.submit(() -> {
                    start.await();
                    return f.store.evict(Long.MAX_VALUE);
                });
                Future<Boolean> deleter = pool.submit(() -> {
                    start.await();
                    return f.delete(id);
                });
                assertEquals(0, evictor.get(), "a pinned object is never evicted");
                assertTrue(deleter.get(), "iteration " + i + ": the object existed, so delete must find it");
                f.store.unpin(pin);
                assertEquals(false, f.stateOf(record).isLive());
            }
            f.assertConsistent();
        } finally {
            pool.shutdownNow();
        }
    }
    @Test
    void shouldNeverFreeAnObjectAReaderPinnedWhileItWasDeletedOrEvicted() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try (var f = new StoreFixture()) {
            CyclicBarrier start = new CyclicBarrier(2);
            var random = new SplittableRandom(8);
            for (int i = 0; i < 3000; i++) {
                TestId id = TestId.random(random);
                long record = f.put(id, 256);
                boolean evict = i % 2 == 0;
                Future<Pin> reader = pool.submit(() -> {
                    start.await();
                    return f.pin(id);
                });
                Future<Boolean> remover = pool.submit(() -> {
                    start.await();
                    return evict ? f.store.evict(Long.MAX_VALUE) > 0 : f.delete(id);
                });
                Pin pin = reader.get();
                boolean removed = remover.get();
                if (pin != null) {
                    assertTrue(f.stateOf(record).isLive(), "iteration " + i + ": a pinned object was freed");
                    StoreFixture.assertPattern(id, f.store.data(pin.slot()));
                    f.store.unpin(pin);
                }
                if (!removed) {
                    assertTrue(pin != null && evict, "iteration " + i + ": only a pin stops an eviction, never a delete");
                    f.delete(id);
                }
                assertEquals(false, f.stateOf(record).isLive(), "iteration " + i);
            }
            assertEquals(0, f.assertConsistent().usedBytes());
        } finally {
            pool.shutdownNow();
        }
    }
    @Test
    void shouldSerialiseTwoClientsOnTheSharedAllocatorLock() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try (var f = new StoreFixture(StoreLayout.forCapacity(1 << 20, 4, 256, 4096));
             Store other = Store.open(f.dir.path(), dev.depot.core.clients.ClientTableDescriptor.KIND_JAVA)) {
            // Two clients (two mappings, two client slots) contend on the lock word itself, not the local lock.
            CyclicBarrier start = new CyclicBarrier(2);
            List<Future<Integer>> results = new ArrayList<>();
            for (Store s : List.of(f.store, other)) {
                long seed = s.clientSlot();
                results.add(pool.submit(() -> {
                    var random = new SplittableRandom(seed);
                    start.await();
                    int kept = 0;
                    for (int i = 0; i < 2000; i++) {
                        TestId id = TestId.random(random);
                        long record = s.create(id.w0(), id.w1(), id.w2(), random.nextInt(1000), new byte[0], true, id.text());
                        s.seal(record);
                        if (random.nextInt(4) != 0) {
                            s.delete(id.w0(), id.w1(), id.w2());
                        } else {
                            kept++;
                        }
                    }
                    return kept;
                }));
            }
            for (Future<Integer> r : results) {
                r.get();
            }
            assertEquals(-1, f.store.lock.holder());
            f.assertConsistent();
        } finally {
            pool.shutdownNow();
        }
    }
}
