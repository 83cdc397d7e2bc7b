package dev.depot.core.store;

import static dev.depot.core.index.IndexEntryDescriptor.generation;
import static dev.depot.core.index.IndexEntryDescriptor.state;
import static dev.depot.core.index.IndexEntryDescriptor.stateWord;
import static dev.depot.core.store.StoreHeaderDescriptor.EVICTED_BYTES_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.EVICTION_COUNT_OFFSET;

import dev.depot.core.clients.ClientTableDescriptor;
import dev.depot.core.heap.HeapBlockDescriptor;
import dev.depot.core.index.EntryState;
import dev.depot.core.index.IndexEntryDescriptor;

/**
 * Eviction of sealed, unpinned objects without the KEEP flag, under the allocator lock, least recently used
 * first: by the last use each index entry records (its seal, or the release of a pin; {@link
 * IndexEntryDescriptor}). For a create ({@link #evictUntilAllocated}) the victims must also lie side by side to
 * make one gap: the candidates are taken in order of last use, and the first one whose blocks, with earlier
 * candidates and free blocks next to it, make the gap needed decides; only the blocks of that gap are evicted.
 * For an explicit {@code evict(bytes)} or a full index, candidates are evicted in that order until the request
 * is met.
 *
 * <p>Evicting one entry: CAS SEALED to EVICTING(me), then scan pin records (volatile; Dekker with pinners). If
 * nobody pins it, free it; otherwise put it back to SEALED. A reader that meets EVICTING waits for the outcome.
 */
final class Eviction {
    /** Candidates taken from one scan of the index. */
    private static final int BATCH = 256;
    /** How long a reader waits for an EVICTING entry to settle before calling it missing. */
    private static final long EVICTING_WAIT_NANOS = 50_000_000L;

    private final Store store;

    Eviction(Store store) {
        this.store = store;
    }

    /**
     * Of the windows of a run that make the gap, the cheapest goes: a window costs the bytes it evicts plus, per
     * victim, the gap needed >> this (a quarter of it), so of two windows that evict about as much the one with
     * fewer victims wins.
     */
    private static final int COUNT_COST_SHIFT = 2;

    /**
     * Evicts a window of adjacent blocks, free or evictable, that together make a block of {@code blockSize},
     * and allocates it; returns its offset or -1. The window is the one whose most recently used victim was
     * used longest ago: no object is evicted while objects used before it, with free space, could have made the
     * gap. Candidates come in batches of {@link #BATCH} from one scan of the index each.
     */
    long evictUntilAllocated(long blockSize) {
        for (int attempt = 0; attempt < 3; attempt++) {
            Window best = findWindow(blockSize);
            if (best == null) {
                return -1;
            }
            boolean all = evictAll(best.victims, best.victimCount);
            long block = store.allocator.allocate(blockSize);
            if (block >= 0 || all) {
                return block;  // all evicted: the window's blocks coalesced into one of blockSize or more
            }
            // A victim was pinned or deleted meanwhile: choose again.
        }
        return -1;
    }

    /**
     * The window made by the least recently used candidates, or null when all of them make none. Candidates
     * with the same last use are taken together, and the cheapest window through any of them wins.
     */
    private Window findWindow(long need) {
        var index = store.index;
        java.util.Set<Integer> pinned = new java.util.HashSet<>();
        store.clients.forEachPin((client, record) -> pinned.add(ClientTableDescriptor.pinnedSlot(record)));
        // Block offset -> index slot of the candidates taken so far.
        java.util.Map<Long, Integer> taken = new java.util.HashMap<>();
        java.util.List<Long> group = new java.util.ArrayList<>();
        long groupUse = Long.MIN_VALUE;
        int afterSlot = -1;
        while (true) {
            int[] batch = index.leastRecentlySealedAfter(BATCH, false, groupUse, afterSlot);
            for (int slot : batch) {
                long use = index.lastUseMicros(slot);
                if (use != groupUse) {
                    Window w = cheapestThrough(group, need, taken);
                    if (w != null) {
                        return w;
                    }
                    group.clear();
                    groupUse = use;
                }
                afterSlot = slot;
                long block = index.blockOffset(slot);
                if (!pinned.contains(slot) && ownsBlock(slot, block)) {
                    taken.put(block, slot);
                    group.add(block);
                }
            }
            if (batch.length < BATCH) {
                return cheapestThrough(group, need, taken);
            }
        }
    }

    /** The cheapest window through one of {@code blocks} (just taken), or null. */
    private Window cheapestThrough(java.util.List<Long> blocks, long need, java.util.Map<Long, Integer> taken) {
        Window best = null;
        for (long block : blocks) {
            Window w = windowThrough(block, need, taken);
            if (w != null && (best == null || w.cost < best.cost)) {
                best = w;
            }
        }
        return best;
    }

    /** True when {@code block} is an allocated block of the heap whose header names {@code slot} its owner. */
    private boolean ownsBlock(int slot, long block) {
        var allocator = store.allocator;
        return block >= 0 && block < allocator.heapLength() && (block & (HeapBlockDescriptor.ALIGNMENT - 1)) == 0
            && !allocator.isFreeBlock(block) && allocator.ownerOf(block) == slot;
    }

    /**
     * The cheapest window that contains {@code block} within the run of free and taken blocks around it and
     * makes {@code need} bytes, or null when the run is too short.
     */
    private Window windowThrough(long block, long need, java.util.Map<Long, Integer> taken) {
        var allocator = store.allocator;
        java.util.ArrayDeque<long[]> run = new java.util.ArrayDeque<>();  // {offset, size, slot or -1}
        long bytes = allocator.blockSize(block);
        run.add(new long[] {block, bytes, taken.get(block)});
        for (long b = allocator.previousBlock(block); b >= 0; b = allocator.previousBlock(b)) {
            long[] e = member(b, taken);
            if (e == null) {
                break;
            }
            run.addFirst(e);
            bytes += e[1];
        }
        for (long b = block + allocator.blockSize(block); b < allocator.heapLength(); b += allocator.blockSize(b)) {
            long[] e = member(b, taken);
            if (e == null) {
                break;
            }
            run.addLast(e);
            bytes += e[1];
        }
        if (bytes < need) {
            return null;
        }
        long[][] blocks = run.toArray(new long[0][]);
        int k = 0;
        while (blocks[k][0] != block) {
            k++;
        }
        // For each start at or before k, the shortest window from it that reaches past k and makes the gap.
        Window best = null;
        int end = k;
        long sum = 0;
        for (int i = 0; i <= end; i++) {
            sum += blocks[i][1];
        }
        for (int start = 0; start <= k; start++) {
            while (sum < need && end + 1 < blocks.length) {
                sum += blocks[++end][1];
            }
            if (sum < need) {
                break;
            }
            long victimBytes = 0;
            int victims = 0;
            for (int i = start; i <= end; i++) {
                if (blocks[i][2] >= 0) {
                    victimBytes += blocks[i][1];
                    victims++;
                }
            }
            long cost = victimBytes + victims * (need >> COUNT_COST_SHIFT);
            if (best == null || cost < best.cost) {
                long[] slots = new long[victims];
                int n = 0;
                for (int i = start; i <= end; i++) {
                    if (blocks[i][2] >= 0) {
                        slots[n++] = blocks[i][2];
                    }
                }
                best = new Window(slots, n, cost);
            }
            sum -= blocks[start][1];
        }
        return best;
    }

    /** {offset, size, slot} of a taken block, {offset, size, -1} of a free one, null for any other. */
    private long[] member(long b, java.util.Map<Long, Integer> taken) {
        var allocator = store.allocator;
        long size = allocator.blockSize(b);
        if (allocator.isFreeBlock(b)) {
            return new long[] {b, size, -1};
        }
        Integer slot = taken.get(b);
        return slot == null ? null : new long[] {b, size, slot};
    }

    /** A chosen window: its victims' slots and its cost. */
    private record Window(long[] victims, int victimCount, long cost) {
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
        store.objectEvents.publish(dev.depot.core.notify.EventRecordDescriptor.TYPE_EVICTED, slot);
        store.heapLock.freeEntryUnderLock(slot);
        store.addCounter(EVICTION_COUNT_OFFSET, 1);
        store.addCounter(EVICTED_BYTES_OFFSET, size);
        return size;
    }

    /** The {@link #BATCH} least recently used sealed entries, oldest first. */
    private int[] oldestSealed() {
        return store.index.leastRecentlySealed(BATCH, false);
    }

    /**
     * Lets an eviction in progress settle (it frees the object or puts it back within its pin scan); false once
     * it has taken longer than {@link #EVICTING_WAIT_NANOS} since {@code since}, which only a stuck evictor does.
     */
    static boolean yieldWhileEvicting(long since) {
        if (System.nanoTime() - since > EVICTING_WAIT_NANOS) {
            return false;
        }
        Thread.yield();
        return true;
    }
}
