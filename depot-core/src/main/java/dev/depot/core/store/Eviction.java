package dev.depot.core.store;

import static dev.depot.core.index.IndexEntryDescriptor.generation;
import static dev.depot.core.index.IndexEntryDescriptor.state;
import static dev.depot.core.index.IndexEntryDescriptor.stateWord;
import static dev.depot.core.store.StoreHeaderDescriptor.EVICTED_BYTES_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.EVICTION_COUNT_OFFSET;

import dev.depot.core.clients.ClientTableDescriptor;
import dev.depot.core.index.EntryState;
import dev.depot.core.index.IndexEntryDescriptor;
import java.util.PriorityQueue;

/**
 * Least-recently-used eviction of sealed, unpinned objects without the KEEP flag, under the allocator lock. Candidates are gathered
 * in batches of the {@link #BATCH} oldest by one scan of the index, then evicted one at a time, oldest first,
 * only until the request is met ("only as much as needed").
 *
 * <p>Evicting one entry: CAS SEALED to EVICTING(me), then scan pin records (volatile; Dekker with pinners). If
 * nobody pins it, free it; otherwise put it back to SEALED. A reader that meets EVICTING waits for the outcome.
 */
final class Eviction {
    private static final int BATCH = 64;

    private final Store store;

    Eviction(Store store) {
        this.store = store;
    }

    /** Evicts until a block of {@code blockSize} can be allocated; returns its offset or -1. */
    long evictUntilAllocated(long blockSize) {
        while (true) {
            int evicted = 0;
            for (int slot : oldestSealed()) {
                if (evictOne(slot) > 0) {
                    evicted++;
                    long block = store.allocator.allocate(blockSize);
                    if (block >= 0) {
                        return block;
                    }
                }
            }
            if (evicted == 0) {
                return -1;
            }
        }
    }

    /** Evicts until at least {@code bytes} of object data are freed or nothing evictable is left. */
    long evictBytes(long bytes) {
        long freed = 0;
        while (freed < bytes) {
            int evicted = 0;
            for (int slot : oldestSealed()) {
                long n = evictOne(slot);
                if (n > 0) {
                    evicted++;
                    freed += n;
                    if (freed >= bytes) {
                        break;
                    }
                }
            }
            if (evicted == 0) {
                break;
            }
        }
        return freed;
    }

    /** Evicts one entry if it is still sealed and unpinned; returns the bytes of heap freed, or 0. */
    private long evictOne(int slot) {
        var index = store.index;
        long sw = index.stateWordVolatile(slot);
        if (state(sw) != EntryState.SEALED || IndexEntryDescriptor.isKept(sw)) {
            return 0;
        }
        long evicting = stateWord(generation(sw), store.me(), EntryState.EVICTING);
        if (!index.compareAndSetStateWord(slot, sw, evicting)) {
            return 0;
        }
        if (store.clients.isPinned(ClientTableDescriptor.pinRecord(slot, generation(sw)))) {
            index.putStateWordRelease(slot, sw);
            return 0;
        }
        long size = store.allocator.blockSize(index.blockOffset(slot));
        store.freeEntryUnderLock(slot);
        store.addCounter(EVICTION_COUNT_OFFSET, 1);
        store.addCounter(EVICTED_BYTES_OFFSET, size);
        return size;
    }

    /** The {@link #BATCH} least recently used sealed entries, oldest first. */
    private int[] oldestSealed() {
        var index = store.index;
        // Max-heap on last access: keeps the BATCH smallest.
        PriorityQueue<long[]> newest = new PriorityQueue<>(BATCH + 1, (a, b) -> Long.compare(b[0], a[0]));
        for (int slot = 0; slot < index.slots(); slot++) {
            long sw = index.stateWordAcquire(slot);
            if (state(sw) != EntryState.SEALED || IndexEntryDescriptor.isKept(sw)) {
                continue;
            }
            long access = index.lastAccess(slot);
            if (newest.size() < BATCH) {
                newest.add(new long[] {access, slot});
            } else if (access < newest.peek()[0]) {
                newest.poll();
                newest.add(new long[] {access, slot});
            }
        }
        int[] out = new int[newest.size()];
        for (int i = out.length - 1; i >= 0; i--) {
            out[i] = (int) newest.poll()[1];
        }
        return out;
    }
}
