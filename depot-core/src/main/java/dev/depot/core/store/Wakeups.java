package dev.depot.core.store;

import static dev.depot.core.store.StoreHeaderDescriptor.EVICTING_SPACE_WAITERS_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.FUTEX_BUCKETS;
import static dev.depot.core.store.StoreHeaderDescriptor.FUTEX_WAITERS_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.SPACE_SEQUENCE_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.SPACE_WAITERS_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.futexWordOffset;

import dev.depot.core.clients.ClientTableDescriptor;
import dev.depot.core.index.ObjectIndex;
import dev.depot.core.memory.Atomics;
import dev.depot.core.sys.FutexWaiter;
import dev.depot.core.sys.Native;
import java.lang.foreign.MemorySegment;

/**
 * The header's futex words that wake waiting clients, each with a count of its waiters so that nobody makes a
 * system call while nobody waits:
 * <ul>
 *   <li>seal buckets: a get waiting for an id sleeps on the word of the id's bucket; a seal (or a restore's end)
 *       bumps it and wakes the bucket when {@code FUTEX_WAITERS} is non-zero.</li>
 *   <li>the space sequence: a create waiting for room sleeps on it; every free bumps it, and an unpin or seal
 *       (which make an object evictable) bumps it while a create that may evict waits.</li>
 * </ul>
 */
final class Wakeups {
    private final Store store;
    private final MemorySegment header;
    private final ObjectIndex index;
    private final AllocationLock lock;

    Wakeups(Store store) {
        this.store = store;
        this.header = store.header;
        this.index = store.index;
        this.lock = store.lock;
    }

    /** Bumps the seal bucket of the entry in {@code slot} and wakes its waiters, if any. */
    void notifySealed(int slot) {
        long word = futexWordOffset(futexBucket(index.homeOfSlot(slot)));
        Atomics.getAndAddInt(header, word, 1);
        // Dekker with sealWaiter: the waiter increments FUTEX_WAITERS then re-checks; we bumped the word then read.
        if (Atomics.getIntVolatile(header, FUTEX_WAITERS_OFFSET) > 0) {
            Native.futexWakeAll(header.address() + word);
            store.count(ClientTableDescriptor.WAKEUPS_OFFSET);
        }
    }

    private static int futexBucket(int slotOrHome) {
        return slotOrHome & (FUTEX_BUCKETS - 1);
    }

    /** See {@link Store#sealWaiter}. */
    FutexWaiter sealWaiter(long w0, long w1, long spinNanos, long timeoutNanos) {
        return new FutexWaiter(header, futexWordOffset(futexBucket(index.home(w0, w1))), this::countSealWaiter,
            spinNanos, timeoutNanos);
    }

    private void countSealWaiter(int delta) {
        if (delta > 0) {
            store.count(ClientTableDescriptor.WAITS_OFFSET);
        }
        Atomics.getAndAddInt(header, FUTEX_WAITERS_OFFSET, delta);
    }

    /**
     * A wait for room on the space sequence. Creates that wait are counted only once they spin no more: an unpin
     * or seal that makes room by eviction bumps the word only for counted waiters (frees bump it always, so they
     * meet spinners too).
     *
     * @param evict whether the waiting create may evict, so that unpins and seals wake it
     */
    FutexWaiter spaceWaiter(boolean evict, long spinNanos, long timeoutNanos) {
        return new FutexWaiter(header, SPACE_SEQUENCE_OFFSET, delta -> countSpaceWaiter(evict, delta), spinNanos,
            timeoutNanos);
    }

    private void countSpaceWaiter(boolean evict, int delta) {
        Atomics.getAndAddInt(header, SPACE_WAITERS_OFFSET, delta);
        if (evict) {
            Atomics.getAndAddInt(header, EVICTING_SPACE_WAITERS_OFFSET, delta);
        }
    }

    /** The space sequence now (volatile); read under the lock, every free bumps it under the lock. */
    int spaceSequenceVolatile() {
        return Atomics.getIntVolatile(header, SPACE_SEQUENCE_OFFSET);
    }

    /**
     * Bumps the space sequence and wakes waiting creates: room may have been made. Under the allocator lock the
     * wake waits for the lock's release ({@link AllocationLock#wakeSpaceWaitersOnRelease}): a waiter woken now
     * would only sleep again on the lock. The bump is now either way, so a create that read the sequence before
     * it does not go to sleep (the kernel compares the word).
     */
    void spaceMayHaveFreed() {
        Atomics.getAndAddInt(header, SPACE_SEQUENCE_OFFSET, 1);
        if (Atomics.getIntVolatile(header, SPACE_WAITERS_OFFSET) > 0) {
            if (lock.isHeldByCurrentThread()) {
                lock.wakeSpaceWaitersOnRelease();
            } else {
                Native.futexWakeAll(header.address() + SPACE_SEQUENCE_OFFSET);
            }
        }
    }

    /**
     * As {@link #spaceMayHaveFreed} but only while a create that may evict waits: for unpins and seals, which free
     * nothing but make an object evictable. A waiting NO_EVICT create is not woken for them (it would only take
     * the lock, fail and sleep again, in the way of the delete it waits for).
     */
    void spaceMayHaveFreedIfWaited() {
        if (Atomics.getIntVolatile(header, EVICTING_SPACE_WAITERS_OFFSET) > 0) {
            spaceMayHaveFreed();
        }
    }
}
