package dev.depot.core.sys;

import static dev.depot.core.testing.SpinUntil.spinUntil;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.core.memory.Atomics;
import dev.depot.core.sys.FutexWaiter.Pause;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The waiting primitive against an announcer written the way Depot's are: make the condition true, bump the word,
 * read the waiter count, wake when it is positive. The timeouts only keep a broken build from hanging.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class FutexWaiterTest {
    private static final long WORD = 0;
    private static final long WAITERS = 64;
    private static final long CONDITION = 128;

    private Arena arena;
    private MemorySegment memory;
    private ExecutorService pool;
    /** Every look the waiter made at the condition. */
    private final AtomicInteger looks = new AtomicInteger();

    @BeforeEach
    void setUp() {
        arena = Arena.ofShared();
        memory = arena.allocate(256, 64);
        // Daemon threads: were a wake-up lost, the blocked waiter must not keep the test JVM alive.
        pool = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "futex-waiter");
            t.setDaemon(true);
            return t;
        });
    }

    @AfterEach
    void tearDown() {
        pool.shutdownNow();
        arena.close();
    }

    private FutexWaiter waiter(long spinNanos, long timeoutNanos) {
        return new FutexWaiter(memory, WORD, delta -> Atomics.getAndAddInt(memory, WAITERS, delta), spinNanos,
            timeoutNanos);
    }

    /** The caller's loop: true once the condition holds, false at the deadline. Records every pause. */
    private boolean await(FutexWaiter wait, List<Pause> pauses) {
        while (true) {
            int sequence = wait.sequence();
            looks.incrementAndGet();
            if (Atomics.getIntVolatile(memory, CONDITION) != 0) {
                return true;
            }
            Pause pause = wait.pause(sequence);
            pauses.add(pause);
            if (pause == Pause.EXPIRED) {
                return false;
            }
        }
    }

    private void announce(boolean condition) {
        if (condition) {
            Atomics.putIntVolatile(memory, CONDITION, 1);
        }
        Atomics.getAndAddInt(memory, WORD, 1);
        if (Atomics.getIntVolatile(memory, WAITERS) > 0) {
            Native.futexWakeAll(memory.address() + WORD);
        }
    }

    private int waiters() {
        return Atomics.getIntVolatile(memory, WAITERS);
    }

    @Test
    void shouldReturnExpiredOnceTheDeadlinePassesWithoutAnAnnouncement() {
        List<Pause> pauses = new ArrayList<>();
        try (FutexWaiter wait = waiter(0, TimeUnit.MILLISECONDS.toNanos(20))) {
            assertFalse(await(wait, pauses));
            assertTrue(wait.expired());
            assertEquals(0, wait.remainingNanos());
        }
        assertEquals(Pause.EXPIRED, pauses.getLast());
        assertEquals(0, waiters(), "the count ends with the wait");
    }

    @Test
    void shouldNotWaitAtAllWithTimeoutZero() {
        List<Pause> pauses = new ArrayList<>();
        try (FutexWaiter wait = waiter(1_000_000, 0)) {
            assertFalse(await(wait, pauses));
        }
        assertEquals(List.of(Pause.EXPIRED), pauses);
        assertEquals(1, looks.get());
    }

    @Test
    void shouldCountItselfAndLookAgainBeforeItSleeps() {
        try (FutexWaiter wait = waiter(0, FutexWaiter.FOREVER)) {
            assertFalse(wait.counted());
            assertEquals(Pause.COUNTED, wait.pause(wait.sequence()), "no spin: counts at once, then looks");
            assertTrue(wait.counted());
            assertEquals(1, waiters());
            assertEquals(Pause.SLEPT, wait.pause(wait.sequence(), TimeUnit.MILLISECONDS.toNanos(1)));
            assertEquals(1, waiters(), "counted until the wait ends");
        }
        assertEquals(0, waiters());
    }

    @Test
    void shouldSpinUncountedBeforeItCountsItself() {
        try (FutexWaiter wait = waiter(TimeUnit.SECONDS.toNanos(10), FutexWaiter.FOREVER)) {
            // The word moved on since this sequence: the spin ends at once, and the caller looks again.
            assertEquals(Pause.SPUN, wait.pause(wait.sequence() - 1));
            assertEquals(0, waiters());
        }
        List<Pause> pauses = new ArrayList<>();
        try (FutexWaiter wait = waiter(TimeUnit.MILLISECONDS.toNanos(1), FutexWaiter.FOREVER)) {
            Pause pause;
            do {
                pause = wait.pause(wait.sequence());
                pauses.add(pause);
            } while (pause == Pause.SPUN);
        }
        assertEquals(Pause.COUNTED, pauses.getLast(), "spins while the spin time lasts, then counts: " + pauses);
        assertEquals(0, waiters());
    }

    @Test
    void shouldWakeWhenAnotherThreadAnnounces() throws Exception {
        Future<Boolean> waiter = pool.submit(() -> {
            try (FutexWaiter wait = waiter(0, FutexWaiter.FOREVER)) {
                return await(wait, new ArrayList<>());
            }
        });
        spinUntil(() -> waiters() > 0, "the waiter counting itself");
        announce(true);
        assertTrue(waiter.get());
        assertEquals(0, waiters());
    }

    @Test
    void shouldLookAgainAfterAWakeUpWithoutTheCondition() throws Exception {
        Future<Boolean> waiter = pool.submit(() -> {
            try (FutexWaiter wait = waiter(0, FutexWaiter.FOREVER)) {
                return await(wait, new ArrayList<>());
            }
        });
        spinUntil(() -> waiters() > 0, "the waiter counting itself");
        int before = looks.get();
        announce(false);  // a wake-up meant for another waiter of the word, or a spurious one
        spinUntil(() -> looks.get() > before, "the waiter looking again");
        assertFalse(waiter.isDone(), "a wake-up without the condition does not end the wait");
        announce(true);
        assertTrue(waiter.get());
        assertEquals(0, waiters());
    }

    @Test
    void shouldNotSleepThroughAnAnnouncementBetweenTheLookAndThePause() {
        try (FutexWaiter wait = waiter(0, FutexWaiter.FOREVER)) {
            int sequence = wait.sequence();
            assertEquals(Pause.COUNTED, wait.pause(sequence));
            sequence = wait.sequence();
            announce(true);
            // The word moved on since the sequence was read: the sleep returns at once instead of lasting forever.
            assertEquals(Pause.SLEPT, wait.pause(sequence));
        }
    }
}
