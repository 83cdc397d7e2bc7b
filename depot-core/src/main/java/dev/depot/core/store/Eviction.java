package dev.depot.core.store;

import static dev.depot.core.index.IndexEntryDescriptor.generation;
import static dev.depot.core.index.IndexEntryDescriptor.state;
import static dev.depot.core.index.IndexEntryDescriptor.stateWord;
import static dev.depot.core.store.StoreHeaderDescriptor.EVICTED_BYTES_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.EVICTION_COUNT_OFFSET;

import dev.depot.core.clients.ClientTableDescriptor;
import dev.depot.core.index.EntryState;
import dev.depot.core.index.IndexEntryDescriptor;

/**
 * Eviction of sealed, unpinned objects without the KEEP flag, under the allocator lock. For a create, a clock
 * hand finds a window of adjacent blocks that makes the gap needed ({@link #evictUntilAllocated}); for an explicit
 * {@code evict(bytes)} or a full index, candidates are gathered in batches of the {@link #BATCH} oldest by one
 * scan of the index and evicted oldest first, only until the request is met.
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

    /**
     * Windows (runs of free and evictable blocks large enough) compared before the cheapest is evicted. Each
     * window past the first is one more block visit, so this bounds the work of a create.
     */
    private static final int WINDOWS_COMPARED = 64;
    /**
     * A window costs the bytes it evicts plus, per victim, the gap needed >> this (a quarter of it): of two
     * windows that evict about as much, the one with fewer victims wins, and a window of many small objects
     * no longer beats one large object for a few bytes. (On {@code depot bench alloc}, bytes alone: 2.9 victims
     * per create that needs room; with this: 1.3, and fewer evicted bytes in all.)
     */
    private static final int COUNT_COST_SHIFT = 2;

    /**
     * Evicts a window of adjacent blocks, free or evictable, that together make a block of {@code blockSize},
     * and allocates it; returns its offset or -1. A clock hand walks the heap in address order from where it
     * last stopped: a block is evictable when it is SEALED, not KEEP, unpinned and not used since the hand last
     * passed it (its clock stamp); a used one gets its stamp set (a second chance) and breaks the run. Of the
     * first {@link #WINDOWS_COMPARED} windows met, the cheapest goes (bytes evicted, plus a charge per victim:
     * {@link #COUNT_COST_SHIFT}), so free neighbours count towards the gap and only as much is evicted as it
     * needs. Each call visits a bounded
     * number of windows past the hand, so the work per victim is O(1) amortised.
     */
    long evictUntilAllocated(long blockSize) {
        for (int attempt = 0; attempt < 3; attempt++) {
            Window best = findWindow(blockSize);
            if (best == null) {
                return -1;
            }
            // Set before the frees: a free that merges the block at the hand into its neighbour moves the hand
            // to the merged block's start, so it always names a block boundary.
            store.allocator.setEvictionHand(best.end);
            boolean all = evictAll(best.victims, best.victimCount);
            long block = store.allocator.allocate(blockSize);
            if (block >= 0 || all) {
                return block;  // all evicted: the window's blocks coalesced into one of blockSize or more
            }
            // A victim was pinned or deleted meanwhile: look again from after the window.
        }
        return -1;
    }

    /** The cheapest window among the first ones past the hand, or null when two turns find none. */
    private Window findWindow(long blockSize) {
        var allocator = store.allocator;
        long heapLength = allocator.heapLength();
        long now = System.currentTimeMillis();
        long pos = allocator.evictionHand();
        Run run = new Run();
        Window best = null;
        int compared = 0;
        for (long walked = 0; walked < 2 * heapLength && compared < WINDOWS_COMPARED; ) {
            if (pos >= heapLength) {
                pos = 0;
                run.clear();
            }
            long size = allocator.blockSize(pos);
            int slot = allocator.isFreeBlock(pos) ? -1 : evictableOwner(pos, now);
            if (slot == NOT_EVICTABLE) {
                run.clear();
            } else {
                run.add(pos, size, slot);
                if (run.bytes >= blockSize) {
                    run.shrinkTo(blockSize);
                    compared++;
                    long cost = run.victimBytes + run.victimCount * (blockSize >> COUNT_COST_SHIFT);
                    if (best == null || cost < best.cost) {
                        best = run.window(pos + size, cost);
                    }
                    run.dropFirst();
                }
            }
            pos += size;
            walked += size;
        }
        if (best == null) {
            allocator.setEvictionHand(pos);
        }
        return best;
    }

    /** A chosen window: its victims' slots, the bytes they hold, and where the hand goes after it. */
    private record Window(long[] victims, int victimCount, long victimBytes, long end, long cost) {
    }

    /** The current run of adjacent free and evictable blocks, as a queue (blocks leave from the front). */
    private static final class Run {
        private long[] sizes = new long[16];
        private long[] slots = new long[16];
        private int head;
        private int tail;
        long bytes;
        long victimBytes;
        int victimCount;

        void clear() {
            head = 0;
            tail = 0;
            bytes = 0;
            victimBytes = 0;
            victimCount = 0;
        }

        void add(long offset, long size, int slot) {
            if (tail == sizes.length) {
                int n = tail - head;
                long[] s = new long[Math.max(16, n * 2)];
                long[] o = new long[s.length];
                System.arraycopy(sizes, head, s, 0, n);
                System.arraycopy(slots, head, o, 0, n);
                sizes = s;
                slots = o;
                head = 0;
                tail = n;
            }
            sizes[tail] = size;
            slots[tail] = slot;
            tail++;
            bytes += size;
            victimBytes += slot >= 0 ? size : 0;
            victimCount += slot >= 0 ? 1 : 0;
        }

        /** Drops blocks from the front while the rest still make {@code need} bytes. */
        void shrinkTo(long need) {
            while (tail - head > 1 && bytes - sizes[head] >= need) {
                dropFirst();
            }
        }

        void dropFirst() {
            bytes -= sizes[head];
            victimBytes -= slots[head] >= 0 ? sizes[head] : 0;
            victimCount -= slots[head] >= 0 ? 1 : 0;
            head++;
        }

        Window window(long end, long cost) {
            long[] victims = new long[tail - head];
            int n = 0;
            for (int i = head; i < tail; i++) {
                if (slots[i] >= 0) {
                    victims[n++] = slots[i];
                }
            }
            return new Window(victims, n, victimBytes, end, cost);
        }
    }

    private static final int NOT_EVICTABLE = -2;

    /**
     * The index slot of the allocated block at {@code block} when it may be evicted now, else
     * {@link #NOT_EVICTABLE}; gives a used block its second chance (stamps it).
     */
    private int evictableOwner(long block, long now) {
        var index = store.index;
        long owner = store.allocator.ownerOf(block);
        if (owner < 0 || owner >= index.slots() || index.blockOffset((int) owner) != block) {
            return NOT_EVICTABLE;
        }
        int slot = (int) owner;
        long sw = index.stateWordAcquire(slot);
        if (state(sw) != EntryState.SEALED || IndexEntryDescriptor.isKept(sw)) {
            return NOT_EVICTABLE;
        }
        long stamp = store.allocator.clockStamp(block);
        if (index.lastAccess(slot) >= stamp) {
            store.allocator.setClockStamp(block, now + 1);
            return NOT_EVICTABLE;
        }
        return slot;
    }

    /** Evicts every slot of a window; false (having evicted some) when one of them could not be evicted. */
    private boolean evictAll(long[] slots, int count) {
        for (int i = 0; i < count; i++) {
            if (evictOne((int) slots[i]) == 0) {
                return false;
            }
        }
        return true;
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
        store.publishEvent(dev.depot.core.notify.EventRecordDescriptor.TYPE_EVICTED, slot);
        store.freeEntryUnderLock(slot);
        store.addCounter(EVICTION_COUNT_OFFSET, 1);
        store.addCounter(EVICTED_BYTES_OFFSET, size);
        return size;
    }

    /** The {@link #BATCH} least recently used sealed entries, oldest first. */
    private int[] oldestSealed() {
        return store.index.leastRecentlySealed(BATCH, false);
    }
}
