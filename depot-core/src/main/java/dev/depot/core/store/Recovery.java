package dev.depot.core.store;

import static dev.depot.core.index.IndexEntryDescriptor.generation;
import static dev.depot.core.index.IndexEntryDescriptor.owner;
import static dev.depot.core.index.IndexEntryDescriptor.state;
import static dev.depot.core.index.IndexEntryDescriptor.stateWord;
import static dev.depot.core.index.IndexEntryDescriptor.isKept;
import static dev.depot.core.index.IndexEntryDescriptor.withState;
import static dev.depot.core.store.StoreHeaderDescriptor.KEPT_BYTES_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.KEPT_OBJECTS_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.OBJECT_COUNT_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.SPILLED_BYTES_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.SPILLED_OBJECTS_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.PENDING_DELETES_OFFSET;

import dev.depot.core.heap.HeapBlockDescriptor;
import dev.depot.core.index.EntryState;
import dev.depot.core.memory.Atomics;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Rebuilds the allocator's derived state (block headers, free lists, used bytes, object count) from the object
 * index, which is the truth. Runs under the allocator lock: when the lock was stolen from a dead holder, when
 * a daemon starts, and for {@code depot doctor}. Also settles entries that a dead client left mid-step:
 * <ul>
 *   <li>CREATING by a dead client: reclaimed (the object was never visible);</li>
 *   <li>EVICTING by a dead client: back to SEALED (eviction had not freed it);</li>
 *   <li>RESTORING by a dead daemon: back to SPILLED (its block is not kept; the spill file is whole);</li>
 *   <li>SPILLED and RESTORE_WANTED: hold no block; counted as objects and spilled bytes;</li>
 *   <li>DELETING by a dead client: DELETE_PENDING (the sweep finishes it);</li>
 *   <li>entries whose block lies outside the heap or overlaps another: dropped and reported.</li>
 * </ul>
 */
public final class Recovery {
    private final Store store;
    private final List<String> problems = new ArrayList<>();

    Recovery(Store store) {
        this.store = store;
    }

    /** Rebuilds; returns the problems found (empty when the index was consistent). */
    public List<String> rebuildUnderLock() {
        var index = store.index;
        long heapLength = store.layout.heapLength();
        boolean[] alive = new boolean[store.clients.maxClients()];
        boolean[] checked = new boolean[alive.length];
        long[] blocks = new long[64];
        int[] slotsOf = new int[32];
        int count = 0;
        long pending = 0;
        long spilled = 0;
        long spilledBytes = 0;
        long kept = 0;
        long keptBytes = 0;
        for (int slot = 0; slot < index.slots(); slot++) {
            long sw = index.rawStateWordVolatile(slot);
            EntryState st;
            try {
                st = state(sw);
            } catch (IllegalStateException e) {
                problems.add("index slot " + slot + ": " + e.getMessage() + "; entry dropped");
                index.putStateWordRelease(slot, stateWord(generation(sw), 0, EntryState.TOMBSTONE));
                continue;
            }
            if (!st.isLive()) {
                continue;
            }
            int owner = owner(sw);
            boolean ownerAlive = owner == store.me() || (owner < alive.length && isAlive(owner, alive, checked));
            if (st == EntryState.CREATING && !ownerAlive) {
                index.putStateWordRelease(slot, stateWord(generation(sw), 0, EntryState.TOMBSTONE));
                continue;
            }
            if (st == EntryState.EVICTING && !ownerAlive) {
                index.putStateWordRelease(slot, withState(sw, 0, EntryState.SEALED));
            } else if (st == EntryState.RESTORING && !ownerAlive) {
                // The restorer died before the data was complete: the spill file is still the truth.
                index.putStateWordRelease(slot, withState(sw, 0, EntryState.SPILLED));
                st = EntryState.SPILLED;
            } else if (st == EntryState.DELETING && !ownerAlive) {
                index.putStateWordRelease(slot, withState(sw, 0, EntryState.DELETE_PENDING));
                st = EntryState.DELETE_PENDING;
            }
            if (st == EntryState.DELETE_PENDING) {
                pending++;
            }
            if (st.isSpilled()) {
                spilled++;
                spilledBytes += HeapBlockDescriptor.blockSizeFor(index.dataLength(slot), index.metadataLength(slot));
                continue;
            }
            long block = index.blockOffset(slot);
            long dataLength = index.dataLength(slot);
            int metadataLength = index.metadataLength(slot);
            long size = HeapBlockDescriptor.blockSizeFor(dataLength, metadataLength);
            String misfit = misfit(slot, block, dataLength, metadataLength, heapLength);
            if (misfit != null) {
                problems.add(misfit + "; entry dropped");
                index.putStateWordRelease(slot, stateWord(generation(sw), 0, EntryState.TOMBSTONE));
                continue;
            }
            if (count == slotsOf.length) {
                blocks = Arrays.copyOf(blocks, blocks.length * 2);
                slotsOf = Arrays.copyOf(slotsOf, slotsOf.length * 2);
            }
            if (isKept(sw)) {
                kept++;
                keptBytes += size;
            }
            blocks[2 * count] = block;
            blocks[2 * count + 1] = size;
            slotsOf[count] = slot;
            count++;
        }
        count = sortAndDropOverlaps(blocks, slotsOf, count);
        store.allocator.rebuild(blocks, count);
        setOwners();
        Atomics.putLongVolatile(store.header, OBJECT_COUNT_OFFSET, count + spilled);
        // Derived like the rest (a holder killed between a state change and a count's update leaves it off).
        Atomics.putLongVolatile(store.header, KEPT_BYTES_OFFSET, kept == 0 ? 0 : keptBytes);
        Atomics.putLongVolatile(store.header, KEPT_OBJECTS_OFFSET, kept);
        Atomics.putLongVolatile(store.header, SPILLED_BYTES_OFFSET, spilledBytes);
        Atomics.putLongVolatile(store.header, SPILLED_OBJECTS_OFFSET, spilled);
        Atomics.putLongVolatile(store.header, PENDING_DELETES_OFFSET, pending);
        return problems;
    }

    /**
     * What the daemon's recovery would drop, found without changing anything ({@code depot doctor --check}):
     * entries with an unknown state, entries whose block does not fit the heap, and entries that overlap another.
     * Under the allocator lock (so that no create or free moves entries meanwhile).
     */
    public List<String> inspectUnderLock() {
        var index = store.index;
        long heapLength = store.layout.heapLength();
        List<long[]> blocks = new ArrayList<>();
        for (int slot = 0; slot < index.slots(); slot++) {
            long sw = index.rawStateWordVolatile(slot);
            EntryState st;
            try {
                st = state(sw);
            } catch (IllegalStateException e) {
                problems.add("index slot " + slot + ": " + e.getMessage() + "; recovery drops the entry");
                continue;
            }
            if (!st.isLive() || st.isSpilled()) {
                continue;  // a spilled entry holds no block (RESTORING does: its block is being filled)
            }
            if (st == EntryState.RESTORING && owner(sw) != store.me() && !store.clients.isAlive(owner(sw))) {
                continue;  // recovery puts it back to SPILLED, block and all
            }
            long block = index.blockOffset(slot);
            long dataLength = index.dataLength(slot);
            int metadataLength = index.metadataLength(slot);
            String misfit = misfit(slot, block, dataLength, metadataLength, heapLength);
            if (misfit != null) {
                problems.add(misfit + "; recovery drops the entry");
                continue;
            }
            blocks.add(new long[] {block, HeapBlockDescriptor.blockSizeFor(dataLength, metadataLength), slot});
        }
        blocks.sort((a, b) -> Long.compare(a[0], b[0]));
        long end = 0;
        for (long[] b : blocks) {
            if (b[0] < end) {
                problems.add("index slot " + b[2] + ": block " + b[0] + ".." + (b[0] + b[1])
                    + " overlaps another object; recovery drops the entry");
                continue;
            }
            end = b[0] + b[1];
        }
        return problems;
    }

    /** Why an entry's block does not fit the heap, or null when it does. */
    static String misfit(int slot, long block, long dataLength, int metadataLength, long heapLength) {
        // dataLength is checked against the heap before the block size is trusted: a huge one overflows the sum.
        if (block < 0 || (block & (HeapBlockDescriptor.ALIGNMENT - 1)) != 0 || dataLength < 0
            || dataLength > heapLength || metadataLength < 0 || metadataLength > Store.MAX_METADATA_LENGTH
            || HeapBlockDescriptor.blockSizeFor(dataLength, metadataLength) > heapLength - block) {
            return "index slot " + slot + ": block offset " + block + " data " + dataLength + " metadata "
                + metadataLength + " does not fit the heap of " + heapLength + " bytes";
        }
        return null;
    }

    /** Names each allocated block's index slot in its header, for eviction. */
    private void setOwners() {
        var index = store.index;
        for (int slot = 0; slot < index.slots(); slot++) {
            EntryState st = state(index.stateWordVolatile(slot));
            if (st.isLive() && !st.isSpilled()) {
                store.allocator.setOwner(index.blockOffset(slot), slot);
            }
        }
    }

    private boolean isAlive(int client, boolean[] alive, boolean[] checked) {
        if (!checked[client]) {
            checked[client] = true;
            alive[client] = store.clients.isAlive(client);
        }
        return alive[client];
    }

    /** Sorts blocks by offset; an entry overlapping its predecessor is dropped. Returns the new count. */
    private int sortAndDropOverlaps(long[] blocks, int[] slotsOf, int count) {
        int[] order = orderByOffset(blocks, count);
        long[] sorted = new long[2 * count];
        int kept = 0;
        long end = 0;
        for (int i : order) {
            long off = blocks[2 * i];
            long size = blocks[2 * i + 1];
            if (off < end) {
                int slot = slotsOf[i];
                problems.add("index slot " + slot + ": block " + off + ".." + (off + size)
                    + " overlaps another object; entry dropped");
                var index = store.index;
                index.putStateWordRelease(slot, stateWord(generation(index.stateWordVolatile(slot)), 0, EntryState.TOMBSTONE));
                continue;
            }
            sorted[2 * kept] = off;
            sorted[2 * kept + 1] = size;
            kept++;
            end = off + size;
        }
        System.arraycopy(sorted, 0, blocks, 0, 2 * kept);
        return kept;
    }

    /**
     * The positions 0..count-1 ordered by their block's offset. A million blocks are sorted at a daemon's start,
     * before the JIT has compiled much: each offset and its position are packed into one {@code long} and the
     * longs sorted as primitives, which takes tens of milliseconds where a comparator over boxed positions takes
     * seconds. Offsets lie below the heap's length, so the two fit in 63 bits for any heap and object count this
     * format allows; otherwise the positions are sorted with a comparator.
     */
    static int[] orderByOffset(long[] blocks, int count) {
        int positionBits = 32 - Integer.numberOfLeadingZeros(Math.max(1, count - 1));
        long maxOffset = 0;
        for (int i = 0; i < count; i++) {
            maxOffset = Math.max(maxOffset, blocks[2 * i]);
        }
        int offsetBits = 64 - Long.numberOfLeadingZeros(maxOffset);
        int[] order = new int[count];
        if (offsetBits + positionBits <= 63) {
            long[] keys = new long[count];
            for (int i = 0; i < count; i++) {
                keys[i] = blocks[2 * i] << positionBits | i;
            }
            Arrays.sort(keys);
            long mask = (1L << positionBits) - 1;
            for (int i = 0; i < count; i++) {
                order[i] = (int) (keys[i] & mask);
            }
            return order;
        }
        Integer[] boxed = new Integer[count];
        for (int i = 0; i < count; i++) {
            boxed[i] = i;
        }
        Arrays.sort(boxed, (a, b) -> Long.compare(blocks[2 * a], blocks[2 * b]));
        for (int i = 0; i < count; i++) {
            order[i] = boxed[i];
        }
        return order;
    }
}
