package dev.depot.core.store;

import static dev.depot.core.store.StoreHeaderDescriptor.ALLOC_LOCK_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.LOCK_WAITERS_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.SPACE_SEQUENCE_OFFSET;

import dev.depot.core.clients.ClientTable;
import dev.depot.core.memory.Atomics;
import dev.depot.core.sys.Native;
import dev.depot.core.sys.ProcessIdentity;
import dev.depot.errors.DepotException;
import dev.depot.errors.StoreBusyException;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The store-wide lock that serialises changes to the heap and to the index's membership (not lookups, pins or
 * seals, which are lock-free). The lock word holds {@code owner client + 1}, so a waiter can tell whether its
 * holder died: after {@link #LIVENESS_CHECK_NANOS} of waiting it checks the owner's pid and start time, and
 * steals the lock from a dead owner with a CAS. A stolen lock means the protected state may be half-changed;
 * {@link #acquire} then returns {@code true} and the caller must rebuild it ({@link Recovery}).
 *
 * <p>A live holder that does not let go (stopped with SIGSTOP, frozen in a debugger) cannot be stolen from:
 * it may continue at any instruction. So no wait is unbounded: {@link #acquire} gives up after
 * {@link #waitLimitNanos()} with a {@link StoreBusyException} naming the holder's pid, and reads never take the
 * lock at all ({@code stat} uses {@link #tryAcquire} with a short bound and reports what it could not read).
 *
 * <p>All threads of a process take the lock as the same client, so a process-local lock orders them first:
 * the lock word alone cannot tell two threads of one client apart.
 */
public final class AllocationLock {
    /** System property: how long a change waits for a live holder, in milliseconds. */
    public static final String WAIT_LIMIT_PROP_NAME = "depot.lock.waitLimitMillis";
    /** Default of {@link #WAIT_LIMIT_PROP_NAME}: 5 s, far beyond any real critical section. */
    public static final long WAIT_LIMIT_MILLIS_DEFAULT = 5_000;
    private static final long WAIT_LIMIT_NANOS = Math.max(1, Long.getLong(WAIT_LIMIT_PROP_NAME, WAIT_LIMIT_MILLIS_DEFAULT))
        * 1_000_000L;

    /** What {@link #tryAcquire} got. */
    public enum Acquisition {
        /** The holder kept it for the whole bound. */
        TIMED_OUT,
        /** Taken; the protected state is sound. */
        ACQUIRED,
        /** Taken from a dead holder (or one whose rebuild failed): the protected state must be rebuilt. */
        ACQUIRED_MUST_REBUILD
    }

    static final long LIVENESS_CHECK_NANOS = 2_000_000L;
    private static final int SPINS_BEFORE_SLEEP = 200;

    private final MemorySegment header;
    private final ClientTable clients;
    /** Orders this process's threads, which share one client slot and so one lock-word value. */
    private final ReentrantLock local = new ReentrantLock();
    /**
     * Set by the holder when it freed space while a create waits for room ({@link #wakeSpaceWaitersOnRelease}):
     * the release wakes them once the lock word is clear. Touched only by the thread that holds {@link #local}.
     */
    private boolean spaceWakeOnRelease;

    /** Lock word left by {@link #releaseForRebuild}: above any client + 1 (at most 65535 clients). */
    static final long NEEDS_REBUILD = 0x1_0001L;

    public AllocationLock(MemorySegment header, ClientTable clients) {
        this.header = header;
        this.clients = clients;
        Atomics.checkAligned(header, ALLOC_LOCK_OFFSET, Long.BYTES, "allocator lock");
    }

    /** How long {@link #acquire} waits for a live holder ({@link #WAIT_LIMIT_PROP_NAME}). */
    public static long waitLimitNanos() {
        return WAIT_LIMIT_NANOS;
    }

    /**
     * Takes the lock for client {@code me}, waiting at most {@link #waitLimitNanos()} for a live holder. Acquire
     * semantics: the previous holder's release publishes its changes to us.
     *
     * @return true when the lock was stolen from a dead holder and the protected state must be rebuilt
     * @throws StoreBusyException when a live holder kept it for the whole wait (stopped, say), naming its pid
     */
    public boolean acquire(int me) {
        long start = System.nanoTime();
        Acquisition a = tryAcquire(me, WAIT_LIMIT_NANOS);
        if (a == Acquisition.TIMED_OUT) {
            throw busy(System.nanoTime() - start);
        }
        return a == Acquisition.ACQUIRED_MUST_REBUILD;
    }

    /** Takes the lock for client {@code me} unless a live holder keeps it for {@code timeoutNanos}. */
    public Acquisition tryAcquire(int me, long timeoutNanos) {
        if (local.isHeldByCurrentThread()) {
            throw new IllegalStateException("allocator lock is already held by this thread (client " + me
                + "): not reentrant");
        }
        long start = System.nanoTime();
        try {
            if (!local.tryLock(timeoutNanos, java.util.concurrent.TimeUnit.NANOSECONDS)) {
                return Acquisition.TIMED_OUT;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DepotException("interrupted while waiting for the allocator lock");
        }
        try {
            Acquisition a = acquireShared(me, Math.max(0, timeoutNanos - (System.nanoTime() - start)));
            if (a == Acquisition.TIMED_OUT) {
                local.unlock();
            }
            return a;
        } catch (RuntimeException | Error e) {
            local.unlock();
            throw e;
        }
    }

    private StoreBusyException busy(long waitedNanos) {
        long holder = Atomics.getLongVolatile(header, ALLOC_LOCK_OFFSET);
        int owner = (int) holder - 1;
        String who;
        if (owner >= 0 && owner < clients.maxClients() && clients.identity(owner) != 0) {
            int pid = ProcessIdentity.pidOf(clients.identity(owner));
            who = "pid " + pid + " (client " + owner + ")";
            if (pid == ProcessHandle.current().pid()) {
                who += ", another thread of this process";
            }
        } else {
            who = holder == 0 ? "another thread of this process" : "client " + owner;
        }
        return new StoreBusyException(String.format(java.util.Locale.ROOT,
            "allocator lock held by %s for %.1f s; is it stopped? A process stopped with SIGSTOP or frozen in a"
                + " debugger keeps the lock until it continues (kill -CONT it, or kill it and Depot recovers);"
                + " reads (get, ls, stat) still work", who, waitedNanos / 1e9));
    }

    private Acquisition acquireShared(int me, long timeoutNanos) {
        long mine = me + 1L;
        int spins = 0;
        long waitStart = 0;
        long nextCheck = 0;
        long start = System.nanoTime();
        while (true) {
            long holder = Atomics.getLongVolatile(header, ALLOC_LOCK_OFFSET);
            if (holder == 0) {
                if (Atomics.compareAndSetLong(header, ALLOC_LOCK_OFFSET, 0, mine)) {
                    return Acquisition.ACQUIRED;
                }
                continue;
            }
            if (holder == NEEDS_REBUILD) {
                if (Atomics.compareAndSetLong(header, ALLOC_LOCK_OFFSET, NEEDS_REBUILD, mine)) {
                    return Acquisition.ACQUIRED_MUST_REBUILD;
                }
                continue;
            }
            if (holder == mine) {
                throw new IllegalStateException("allocator lock is already held by this client (" + me + "): not reentrant");
            }
            if (++spins < SPINS_BEFORE_SLEEP) {
                Thread.onSpinWait();
                continue;
            }
            long left = timeoutNanos - (System.nanoTime() - start);
            if (left <= 0) {
                return Acquisition.TIMED_OUT;
            }
            Atomics.getAndAddInt(header, LOCK_WAITERS_OFFSET, 1);
            try {
                Native.futexWait(header.address() + ALLOC_LOCK_OFFSET, (int) holder, Math.min(left, LIVENESS_CHECK_NANOS));
            } finally {
                Atomics.getAndAddInt(header, LOCK_WAITERS_OFFSET, -1);
            }
            long now = System.nanoTime();
            if (waitStart == 0) {
                waitStart = now;
                nextCheck = now + LIVENESS_CHECK_NANOS;
            } else if (now - nextCheck >= 0) {
                nextCheck = now + LIVENESS_CHECK_NANOS;
                int owner = (int) holder - 1;
                boolean dead = owner < 0 || owner >= clients.maxClients() || !clients.isAlive(owner);
                if (dead && Atomics.compareAndSetLong(header, ALLOC_LOCK_OFFSET, holder, mine)) {
                    return Acquisition.ACQUIRED_MUST_REBUILD;
                }
            }
        }
    }

    /** Releases the lock (release store: publishes everything done under it). */
    public void release(int me) {
        if (!local.isHeldByCurrentThread()) {
            throw new IllegalStateException("allocator lock released by a thread of client " + me + " that does not hold it");
        }
        long mine = me + 1L;
        try {
            if (!Atomics.compareAndSetLong(header, ALLOC_LOCK_OFFSET, mine, 0)) {
                throw new IllegalStateException("allocator lock released by client " + me + " but held by "
                    + (Atomics.getLongVolatile(header, ALLOC_LOCK_OFFSET) - 1));
            }
            // Dekker with a sleeper, which counts itself in LOCK_WAITERS and then sleeps only while the word
            // still names the holder: we cleared the word, then read the count.
            if (Atomics.getIntVolatile(header, LOCK_WAITERS_OFFSET) > 0) {
                Native.futexWake(header.address() + ALLOC_LOCK_OFFSET, 1);
            }
            wakeSpaceWaitersIfAsked();
        } finally {
            spaceWakeOnRelease = false;
            local.unlock();
        }
    }

    /**
     * Asks {@link #release} to wake the creates asleep on the space sequence (which the caller bumped under the
     * lock) after the lock word is clear, not now: woken under the lock, a waiting create would find the lock
     * held, sleep on it and need a second wake from the release. The caller must hold the lock.
     */
    void wakeSpaceWaitersOnRelease() {
        if (!local.isHeldByCurrentThread()) {
            throw new IllegalStateException("space wake deferred by a thread that does not hold the allocator lock");
        }
        spaceWakeOnRelease = true;
    }

    private void wakeSpaceWaitersIfAsked() {
        if (spaceWakeOnRelease) {
            spaceWakeOnRelease = false;
            Native.futexWakeAll(header.address() + SPACE_SEQUENCE_OFFSET);
        }
    }

    /**
     * Releases the lock marked so that the next acquirer rebuilds the protected state: for a holder whose
     * rebuild failed half-way (corruption it could not handle), which must neither keep the lock forever nor
     * hand a half-rebuilt heap to the next process as if it were sound.
     */
    public void releaseForRebuild(int me) {
        try {
            Atomics.compareAndSetLong(header, ALLOC_LOCK_OFFSET, me + 1L, NEEDS_REBUILD);
            if (Atomics.getIntVolatile(header, LOCK_WAITERS_OFFSET) > 0) {
                Native.futexWake(header.address() + ALLOC_LOCK_OFFSET, 1);
            }
            wakeSpaceWaitersIfAsked();
        } finally {
            spaceWakeOnRelease = false;
            local.unlock();
        }
    }

    /** True when the calling thread holds the lock. */
    public boolean isHeldByCurrentThread() {
        return local.isHeldByCurrentThread();
    }

    /** The client holding the lock, or -1. */
    public int holder() {
        return (int) Atomics.getLongVolatile(header, ALLOC_LOCK_OFFSET) - 1;
    }
}
