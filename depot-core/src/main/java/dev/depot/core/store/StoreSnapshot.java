package dev.depot.core.store;

import static dev.depot.core.index.IndexEntryDescriptor.generation;
import static dev.depot.core.index.IndexEntryDescriptor.hasKnownState;
import static dev.depot.core.index.IndexEntryDescriptor.state;
import static dev.depot.core.store.StoreHeaderDescriptor.DAEMON_IDENTITY_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.EVICTED_BYTES_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.EVICTION_COUNT_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.HEARTBEAT_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.KEPT_BYTES_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.KEPT_OBJECTS_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.OBJECT_COUNT_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.RESTORE_COUNT_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.RESTORE_FAILURE_COUNT_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.SPILL_FAILURE_COUNT_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.SPILLED_BYTES_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.SPILLED_OBJECTS_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.SPILL_COUNT_OFFSET;

import dev.depot.core.clients.ClientTableDescriptor;
import dev.depot.core.index.EntryState;
import dev.depot.core.index.IndexEntryDescriptor;
import dev.depot.core.memory.Atomics;
import dev.depot.core.sys.ProcessIdentity;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Read-only views of a store for {@code stat} and {@code ls}: one pass over the pin records and one over the
 * index. Lock-free except for the free lists (largest free block), read under the allocator lock if it can be
 * had within {@link #STATISTICS_LOCK_WAIT_NANOS}. Entries
 * are read like a seqlock: an entry whose state word changed while it was read is left out.
 */
final class StoreSnapshot {
    /**
     * How long statistics wait for the allocator lock to read the largest free block; after that it is reported
     * unknown (-1): a read must never hang on a holder that does not let go (a stopped process).
     */
    private static final long STATISTICS_LOCK_WAIT_NANOS = 100_000_000L;
    private final Store store;

    StoreSnapshot(Store store) {
        this.store = store;
    }

    StoreStatistics statistics() {
        var index = store.index;
        long pinnedBytes = 0;
        for (int slot : pinnedSlots().keySet()) {
            pinnedBytes += index.dataLength(slot);
        }
        long sealed = 0;
        long unsealedBytes = 0;
        for (int slot = 0; slot < index.slots(); slot++) {
            long word = index.rawStateWordVolatile(slot);
            if (!hasKnownState(word)) {
                continue;  // corrupt: left out of the figures; `depot doctor` reports and drops it
            }
            EntryState st = state(word);
            if (st == EntryState.SEALED) {
                sealed++;
            } else if (st == EntryState.CREATING) {
                unsealedBytes += index.dataLength(slot);
            }
        }
        long largest = -1;
        boolean held = store.lock.isHeldByCurrentThread();
        if (held || store.heapLock.tryLockAndRecover(STATISTICS_LOCK_WAIT_NANOS)) {
            try {
                largest = store.allocator.largestFreeBlock();
            } finally {
                if (!held) {
                    store.heapLock.release();
                }
            }
        }
        var header = store.header;
        var layout = store.layout;
        long used = store.allocator.usedBytes();
        long daemon = Atomics.getLongAcquire(header, DAEMON_IDENTITY_OFFSET);
        return new StoreStatistics(layout.heapLength(), used, layout.heapLength() - used, pinnedBytes,
            Atomics.getLongVolatile(header, OBJECT_COUNT_OFFSET), sealed, unsealedBytes, store.clients.countRegistered(),
            Atomics.getLongVolatile(header, EVICTION_COUNT_OFFSET), Atomics.getLongVolatile(header, EVICTED_BYTES_OFFSET),
            largest, layout.maxObjects(), ProcessIdentity.isAlive(daemon) ? ProcessIdentity.pidOf(daemon) : 0,
            Atomics.getLongAcquire(header, HEARTBEAT_OFFSET), Atomics.getLongVolatile(header, KEPT_BYTES_OFFSET),
            Atomics.getLongVolatile(header, KEPT_OBJECTS_OFFSET), Atomics.getLongVolatile(header, SPILLED_BYTES_OFFSET),
            Atomics.getLongVolatile(header, SPILLED_OBJECTS_OFFSET), Atomics.getLongVolatile(header, SPILL_COUNT_OFFSET),
            Atomics.getLongVolatile(header, RESTORE_COUNT_OFFSET), store.spillerIsOn() ? store.spillDirectory() : null,
            Atomics.getLongVolatile(header, SPILL_FAILURE_COUNT_OFFSET),
            Atomics.getLongVolatile(header, RESTORE_FAILURE_COUNT_OFFSET));
    }

    List<ObjectEntry> list() {
        List<ObjectEntry> out = new ArrayList<>();
        forEachEntry(out::add);
        return out;
    }

    /** Hands each live entry to {@code sink} in index order; holds nothing but the pinned slots meanwhile. */
    void forEachEntry(Consumer<ObjectEntry> sink) {
        var index = store.index;
        Map<Integer, Integer> pinned = pinnedSlots();
        for (int slot = 0; slot < index.slots(); slot++) {
            long sw = index.rawStateWordVolatile(slot);
            if (!hasKnownState(sw)) {
                continue;  // corrupt: left out; `depot doctor` reports and drops it
            }
            EntryState st = state(sw);
            if (!st.isLive()) {
                continue;
            }
            byte[] id = new byte[IndexEntryDescriptor.ID_LENGTH];
            index.readId(slot, id);
            var entry = new ObjectEntry(id, st, index.dataLength(slot), index.metadataLength(slot),
                pinned.getOrDefault(slot, 0), index.createTime(slot), index.lastUseMicros(slot) / 1000);
            if (index.rawStateWordVolatile(slot) == sw) {
                sink.accept(entry);
            }
        }
    }

    /** Index slot to number of pins, for every pinned entry whose generation still matches. */
    private Map<Integer, Integer> pinnedSlots() {
        var index = store.index;
        Map<Integer, Integer> pinned = new HashMap<>();
        store.clients.forEachPin((client, record) -> {
            int slot = ClientTableDescriptor.pinnedSlot(record);
            if (slot >= 0 && slot < index.slots() && generation(index.rawStateWordVolatile(slot)) == (int) record) {
                pinned.merge(slot, 1, Integer::sum);
            }
        });
        return pinned;
    }
}
