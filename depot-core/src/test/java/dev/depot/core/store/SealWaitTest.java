package dev.depot.core.store;

import static dev.depot.core.store.StoreHeaderDescriptor.FUTEX_WAITERS_OFFSET;
import static dev.depot.core.testing.SpinUntil.spinUntil;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.depot.core.memory.Atomics;
import dev.depot.core.testing.TestId;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The futex wait on seal. The timeouts only keep a broken build from hanging; nothing asserts on time. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class SealWaitTest {
    /** Waits until the object is sealed, the way a client's get does: counted as a waiter until it ends. */
    private static Pin awaitObject(Store store, TestId id) {
        store.beginSealWait();
        try {
            while (true) {
                int sequence = store.sealSequence(id.w0(), id.w1());
                Pin pin = store.tryPin(id.w0(), id.w1(), id.w2());
                if (pin != null) {
                    return pin;
                }
                store.awaitSeal(id.w0(), id.w1(), sequence, -1);
            }
        } finally {
            store.endSealWait();
        }
    }

    @Test
    void shouldWakeAWaiterWhenAnotherThreadSeals() throws Exception {
        // Daemon: were the wake-up lost, the blocked waiter must not keep the test JVM alive.
        ExecutorService pool = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "seal-waiter");
            t.setDaemon(true);
            return t;
        });
        try (var f = new StoreFixture()) {
            TestId id = f.newId();
            Future<Pin> waiter = pool.submit(() -> awaitObject(f.store, id));
            spinUntil(() -> Atomics.getIntVolatile(f.store.header, FUTEX_WAITERS_OFFSET) > 0,
                "the waiter counting itself in FUTEX_WAITERS");
            f.put(id, 4000);
            Pin pin = waiter.get();
            StoreFixture.assertPattern(id, f.store.data(pin.slot()));
            f.store.unpin(pin);
            assertEquals(0, Atomics.getIntVolatile(f.store.header, FUTEX_WAITERS_OFFSET));
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void shouldNotMissASealBetweenTheLookupAndTheWait() {
        try (var f = new StoreFixture()) {
            TestId id = f.newId();
            int sequence = f.store.sealSequence(id.w0(), id.w1());
            assertNull(f.pin(id));
            f.put(id, 10);
            // The word moved on since the sequence was read: the wait returns at once instead of sleeping forever.
            f.store.awaitSeal(id.w0(), id.w1(), sequence, -1);
            assertNotNull(f.pin(id));
        }
    }

    @Test
    void shouldReturnFromATimedWaitWhenNothingIsSealed() {
        try (var f = new StoreFixture()) {
            TestId id = f.newId();
            int sequence = f.store.sealSequence(id.w0(), id.w1());
            f.store.awaitSeal(id.w0(), id.w1(), sequence, TimeUnit.MILLISECONDS.toNanos(20));
            assertNull(f.pin(id));
            assertEquals(0, Atomics.getIntVolatile(f.store.header, FUTEX_WAITERS_OFFSET));
        }
    }
}
