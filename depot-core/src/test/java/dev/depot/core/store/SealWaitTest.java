package dev.depot.core.store;

import static dev.depot.core.store.StoreHeaderDescriptor.FUTEX_WAITERS_OFFSET;
import static dev.depot.core.testing.SpinUntil.spinUntil;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.depot.core.memory.Atomics;
import dev.depot.core.sys.FutexWaiter;
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
        try (FutexWaiter wait = store.sealWaiter(id.w0(), id.w1(), 0, FutexWaiter.FOREVER)) {
            while (true) {
                int sequence = wait.sequence();
                Pin pin = store.tryPin(id.w0(), id.w1(), id.w2());
                if (pin != null) {
                    return pin;
                }
                wait.pause(sequence);
            }
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
            try (FutexWaiter wait = f.store.sealWaiter(id.w0(), id.w1(), 0, FutexWaiter.FOREVER)) {
                assertEquals(FutexWaiter.Pause.COUNTED, wait.pause(wait.sequence()));
                int sequence = wait.sequence();
                assertNull(f.pin(id));
                f.put(id, 10);
                // The word moved on since the sequence was read: the wait returns at once instead of sleeping forever.
                assertEquals(FutexWaiter.Pause.SLEPT, wait.pause(sequence));
            }
            assertNotNull(f.pin(id));
        }
    }

    @Test
    void shouldReturnFromATimedWaitWhenNothingIsSealed() {
        try (var f = new StoreFixture()) {
            TestId id = f.newId();
            try (FutexWaiter wait = f.store.sealWaiter(id.w0(), id.w1(), 0, TimeUnit.MILLISECONDS.toNanos(20))) {
                while (wait.pause(wait.sequence()) != FutexWaiter.Pause.EXPIRED) {
                    assertNull(f.pin(id));
                }
            }
            assertNull(f.pin(id));
            assertEquals(0, Atomics.getIntVolatile(f.store.header, FUTEX_WAITERS_OFFSET));
        }
    }
}
