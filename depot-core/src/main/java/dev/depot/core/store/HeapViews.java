package dev.depot.core.store;

import dev.depot.core.heap.HeapBlockDescriptor;
import dev.depot.core.index.ObjectIndex;
import dev.depot.errors.StoreFormatException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;

/**
 * Slices of the heap for an object's data and metadata. The index is untrusted: every slice is checked to lie
 * inside the heap before it is made ({@link #checkFits}).
 */
final class HeapViews {
    /** Bytes between the words {@link #preTouch} reads: the smallest page size. */
    static final long PRE_TOUCH_STRIDE = 4096;

    private final MemorySegment heap;
    private final MemorySegment heapReadOnly;
    private final ObjectIndex index;
    private final StoreLayout layout;
    private final Path directory;
    @SuppressWarnings("unused")
    private volatile byte preTouchSink;

    HeapViews(MemorySegment heap, ObjectIndex index, StoreLayout layout, Path directory) {
        this.heap = heap;
        this.heapReadOnly = heap.asReadOnly();
        this.index = index;
        this.layout = layout;
        this.directory = directory;
    }

    /** See {@link Store#data}. */
    MemorySegment data(int slot) {
        return heap.asSlice(checkedDataStart(slot), index.dataLength(slot));
    }

    /** See {@link Store#dataReadOnly}. */
    MemorySegment dataReadOnly(int slot) {
        return heapReadOnly.asSlice(checkedDataStart(slot), index.dataLength(slot));
    }

    private long checkedDataStart(int slot) {
        long block = index.blockOffset(slot);
        checkFits(slot, block);
        return block + HeapBlockDescriptor.HEADER_LENGTH;
    }

    /** See {@link Store#metadata}. */
    MemorySegment metadata(int slot) {
        long block = index.blockOffset(slot);
        checkFits(slot, block);
        return heap.asSlice(block + HeapBlockDescriptor.HEADER_LENGTH + index.dataLength(slot), index.metadataLength(slot));
    }

    /**
     * The index is untrusted: an entry whose block (data and metadata) does not lie inside the heap is corruption,
     * reported naming the slot, the same check recovery drops such entries by.
     */
    private void checkFits(int slot, long block) {
        String misfit = Recovery.misfit(slot, block, index.dataLength(slot), index.metadataLength(slot), layout.heapLength());
        if (misfit != null) {
            throw new StoreFormatException("the store at " + directory + " is corrupt: " + misfit
                + "; run `depot doctor` to drop the entry");
        }
    }

    /** See {@link Store#dataFileOffset}. */
    long dataFileOffset(int slot) {
        return layout.heapOffset() + index.blockOffset(slot) + HeapBlockDescriptor.HEADER_LENGTH;
    }

    /** See {@link Store#preTouchHeap}. */
    long preTouch() {
        long pages = 0;
        byte seen = 0;
        for (long at = 0; at < heap.byteSize(); at += PRE_TOUCH_STRIDE) {
            seen |= heap.get(ValueLayout.JAVA_BYTE, at);
            pages++;
        }
        preTouchSink = seen;  // kept, so the reads are not optimised away
        return pages;
    }
}
