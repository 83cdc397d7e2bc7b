package dev.depot.core.sys;

import dev.depot.core.memory.Atomics;
import java.lang.foreign.MemorySegment;

/**
 * Waits, with a deadline, for a condition that other processes announce by bumping a 32-bit futex word in
 * shared memory: Depot's one waiting protocol. A blocking create waits on the space sequence, a get on its id's
 * seal word, a subscriber on its ring's wake sequence, a delete on a restore. Announcers pair with it: they make
 * the condition true, bump the word, then read the waiter count and wake the word's sleepers only when it is
 * positive.
 *
 * <p>The caller drives the loop, and looks at its condition on every turn:
 * <pre>{@code
 * try (FutexWaiter wait = new FutexWaiter(segment, wordOffset, waiters, spinNanos, timeoutNanos)) {
 *     while (true) {
 *         int sequence = wait.sequence();            // 1. read the word before looking
 *         if (condition()) {                         // 2. look
 *             return result;
 *         }
 *         if (wait.pause(sequence) == Pause.EXPIRED) {   // 3. spin, count, sleep
 *             return timedOut;
 *         }
 *     }
 * }
 * }</pre>
 * Each {@link #pause} is one step of three phases:
 * <ol>
 *   <li><b>spin</b> for the first {@code spinNanos} of the wait: yields the CPU while the word still equals the
 *       sequence (the process about to announce may be waiting for this very CPU). A change that comes within
 *       microseconds is met awake: no sleep and wake-up for the waiter, no wake-up system call for the
 *       announcer. Spinners are not counted.</li>
 *   <li><b>count</b>, once: adds the caller to the waiter count ({@link Waiters#add}) and returns, so that the
 *       caller looks again. Dekker with the announcer, who bumps the word and then reads the count: an
 *       announcement before the look is seen by the look; one after it moves the word the look's sequence was
 *       read from, and sees the count.</li>
 *   <li><b>sleep</b> in {@code FUTEX_WAIT} while the word equals the sequence, until the deadline (or
 *       {@code maxSleepNanos}). The kernel compares the word before sleeping, so a bump after the look is never
 *       slept through.</li>
 * </ol>
 * Every return of {@code pause} (a bump, a wake-up meant for another waiter of the same word, a signal, a
 * spurious wake-up) leads back to the caller's look: a waiter never trusts a wake-up, it re-checks. The caller
 * stays counted until {@link #close}, so that the look after a wake-up does not first wait for the count's cache
 * line. The deadline is measured as a difference of {@link System#nanoTime} readings (no sum that could wrap).
 * For one thread; not reusable after {@code close}.
 */
public final class FutexWaiter implements AutoCloseable {
    /** A timeout without limit. */
    public static final long FOREVER = -1;

    /** What one {@link #pause} did; the caller looks at its condition again after every one but {@link #EXPIRED}. */
    public enum Pause {
        /** Spun until the word moved or the spin time ended. */
        SPUN,
        /** Counted the caller among the waiters: it must look before it sleeps. */
        COUNTED,
        /** Slept in {@code FUTEX_WAIT}, or found the word moved already. */
        SLEPT,
        /** The deadline has passed: nothing was done. */
        EXPIRED
    }

    /** The waiter count of a futex word, which announcers read after their bump to decide whether to wake. */
    @FunctionalInterface
    public interface Waiters {
        /**
         * Adds {@code delta} to the count: +1 when a waiter starts to count, -1 when it ends. Sequentially
         * consistent (a {@code getAndAdd} or volatile store), so that it orders with the announcer's bump.
         */
        void add(int delta);
    }

    private final MemorySegment segment;
    private final long wordOffset;
    private final long wordAddress;
    private final Waiters waiters;
    private final long spinNanos;
    private final long startNanos;
    private long timeoutNanos;
    private boolean counted;

    /**
     * Starts a wait (its clock starts now) on the futex word at {@code wordOffset} of {@code segment}.
     *
     * @param spinNanos how long the wait spins before it counts itself and sleeps (0: never)
     * @param timeoutNanos how long it waits in all; {@link #FOREVER} (any negative value) for no limit
     */
    public FutexWaiter(MemorySegment segment, long wordOffset, Waiters waiters, long spinNanos, long timeoutNanos) {
        Atomics.checkAligned(segment, wordOffset, Integer.BYTES, "futex word");
        this.segment = segment;
        this.wordOffset = wordOffset;
        this.wordAddress = segment.address() + wordOffset;
        this.waiters = waiters;
        this.spinNanos = Math.max(0, spinNanos);
        this.timeoutNanos = timeoutNanos < 0 ? FOREVER : timeoutNanos;
        this.startNanos = System.nanoTime();
    }

    /** The word now (acquire): read it before looking at the condition, and pass it to {@link #pause}. */
    public int sequence() {
        return Atomics.getIntAcquire(segment, wordOffset);
    }

    /** The {@link System#nanoTime} at which the wait started. */
    public long startNanos() {
        return startNanos;
    }

    /** Changes how long the wait lasts in all, counted from its start ({@link #FOREVER}: no limit). */
    public void timeoutNanos(long timeoutNanos) {
        this.timeoutNanos = timeoutNanos < 0 ? FOREVER : timeoutNanos;
    }

    /** Nanoseconds left until the deadline: {@link #FOREVER} without one, else at least 0. */
    public long remainingNanos() {
        return remainingNanos(System.nanoTime() - startNanos);
    }

    /** Whether the deadline has passed. */
    public boolean expired() {
        return remainingNanos() == 0;
    }

    /** Whether the caller is counted among the waiters: its next {@link #pause} (before the deadline) sleeps. */
    public boolean counted() {
        return counted;
    }

    /** As {@link #pause(int, long)} with no cap on the sleep. */
    public Pause pause(int sequence) {
        return pause(sequence, FOREVER);
    }

    /**
     * One step of the wait: spin, count or sleep (see the class comment), never past the deadline; a sleep lasts
     * at most {@code maxSleepNanos} (negative: no cap), for callers that must look again now and then whatever
     * the word does.
     *
     * @param sequence the word as read (with {@link #sequence}, or under a lock that every bump takes) before the
     *                 caller's last look
     */
    public Pause pause(int sequence, long maxSleepNanos) {
        long elapsed = System.nanoTime() - startNanos;
        long left = remainingNanos(elapsed);
        if (left == 0) {
            return Pause.EXPIRED;
        }
        if (!counted && elapsed < spinNanos) {
            long spinEnd = left == FOREVER ? spinNanos : Math.min(spinNanos, elapsed + left);
            while (Atomics.getIntAcquire(segment, wordOffset) == sequence && System.nanoTime() - startNanos < spinEnd) {
                Thread.yield();
            }
            return Pause.SPUN;
        }
        if (!counted) {
            waiters.add(1);
            counted = true;
            return Pause.COUNTED;
        }
        long sleep = left == FOREVER ? maxSleepNanos : maxSleepNanos < 0 ? left : Math.min(left, maxSleepNanos);
        Native.futexWait(wordAddress, sequence, sleep);
        return Pause.SLEPT;
    }

    private long remainingNanos(long elapsed) {
        return timeoutNanos == FOREVER ? FOREVER : Math.max(0, timeoutNanos - elapsed);
    }

    /** Ends the caller's count, if it was counted. Closing twice is harmless. */
    @Override
    public void close() {
        if (counted) {
            counted = false;
            waiters.add(-1);
        }
    }
}
