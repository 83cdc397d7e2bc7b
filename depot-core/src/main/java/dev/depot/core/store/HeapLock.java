package dev.depot.core.store;

import static dev.depot.core.index.IndexEntryDescriptor.state;
import static dev.depot.core.store.StoreHeaderDescriptor.KEPT_BYTES_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.KEPT_OBJECTS_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.OBJECT_COUNT_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.SPILLED_BYTES_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.SPILLED_OBJECTS_OFFSET;

import dev.depot.core.heap.HeapAllocator;
import dev.depot.core.heap.HeapBlockDescriptor;
import dev.depot.core.index.IndexEntryDescriptor;
import dev.depot.core.index.ObjectIndex;
import java.util.List;

/**
 * One client's hold on the allocator lock ({@link AllocationLock}) and the one change every path makes under it:
 * freeing an entry. Taking the lock from a holder that died mid-change rebuilds the heap first ({@link Recovery});
 * a rebuild that fails hands the lock on marked, so that the next holder rebuilds instead.
 */
final class HeapLock {
    private final Store store;
    private final AllocationLock lock;
    private final ObjectIndex index;
    private final HeapAllocator allocator;
    private final int me;

    HeapLock(Store store) {
        this.store = store;
        this.lock = store.lock;
        this.index = store.index;
        this.allocator = store.allocator;
        this.me = store.me();
    }

    /**
     * Takes the allocator lock, rebuilding the heap first when the previous holder died holding it.
     *
     * @throws dev.depot.errors.StoreBusyException when a live holder keeps it beyond the wait limit
     */
    void lockAndRecover() {
        if (lock.acquire(me)) {
            rebuildOrHandOn();
        }
    }

    /** As {@link #lockAndRecover} but gives up (false) when a live holder keeps the lock {@code timeoutNanos}. */
    boolean tryLockAndRecover(long timeoutNanos) {
        AllocationLock.Acquisition a = lock.tryAcquire(me, timeoutNanos);
        if (a == AllocationLock.Acquisition.ACQUIRED_MUST_REBUILD) {
            rebuildOrHandOn();
        }
        return a != AllocationLock.Acquisition.TIMED_OUT;
    }

    void release() {
        lock.release(me);
    }

    /** Takes the lock, rebuilds the heap whoever held it last, and releases it; returns the problems found. */
    List<String> recover() {
        lock.acquire(me);
        List<String> problems = rebuildOrHandOn();
        lock.release(me);
        return problems;
    }

    /** Rebuilds under the lock; if that fails, releases the lock marked for the next holder to rebuild. */
    private List<String> rebuildOrHandOn() {
        try {
            return new Recovery(store).rebuildUnderLock();
        } catch (RuntimeException | Error e) {
            lock.releaseForRebuild(me);
            throw e;
        }
    }

    /** Frees a live entry's block and removes the entry. Under the lock. */
    void freeEntryUnderLock(int slot) {
        long sw = index.stateWordVolatile(slot);
        if (state(sw).isSpilled()) {
            store.addCounter(SPILLED_BYTES_OFFSET, -HeapBlockDescriptor.blockSizeFor(index.dataLength(slot),
                index.metadataLength(slot)));
            store.addCounter(SPILLED_OBJECTS_OFFSET, -1);
        } else {
            long block = index.blockOffset(slot);
            if (IndexEntryDescriptor.isKept(sw)) {
                store.addCounter(KEPT_BYTES_OFFSET, -allocator.blockSize(block));
                store.addCounter(KEPT_OBJECTS_OFFSET, -1);
            }
            allocator.free(block);
        }
        index.remove(slot);
        store.addCounter(OBJECT_COUNT_OFFSET, -1);
        store.wakeups.spaceMayHaveFreed();
    }
}
