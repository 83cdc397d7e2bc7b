package dev.depot.core.heap;

import static dev.depot.core.heap.HeapBlockDescriptor.*;
import static dev.depot.core.store.StoreHeaderDescriptor.FREE_BINS;
import static dev.depot.core.store.StoreHeaderDescriptor.USED_BYTES_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.freeBinOffset;

import dev.depot.core.memory.Atomics;
import dev.depot.core.memory.Bounds;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Boundary-tag allocator over the data heap with segregated free lists (one bin per power of two).
 * Every method must be called under the allocator lock ({@link dev.depot.core.store.AllocationLock}); the
 * lock's acquire and release order these plain accesses between processes. Used bytes are also published
 * with a release store for lock-free readers ({@code depot stat}).
 *
 * <p>Allocation takes the first fit in the size's own bin (bounded scan), else the first block of any larger
 * bin, else (no larger block exists) the first fit anywhere in its own bin, and splits off the rest. Freeing coalesces with both neighbours. Everything here is derived state:
 * {@link #rebuild} recreates it from the object index after a crash.
 */
public final class HeapAllocator {
    /** Blocks in the exact bin examined before moving to a larger bin. */
    private static final int FIRST_FIT_SCAN_LIMIT = 32;
    /**
     * Every remainder becomes a free block (the smallest is a bare header), so an allocated block is always
     * exactly the size asked for and {@link #rebuild} from the index reproduces the heap byte for byte.
     */
    private static final long MIN_SPLIT = ALIGNMENT;
    /**
     * By default a block is small below heap length >> this (4 MiB of 1 GiB). On {@code depot bench alloc}
     * (sizes log-uniform 1 KiB..64 MiB) 1/64, 1/256 and 1/1024 of the heap gave 3.0, 2.9 and 3.3 victims per
     * create that needed room under the bytes-only window choice, against 4.4 with no segregation.
     */
    private static final int SMALL_LIMIT_SHIFT = 8;
    private static final long SMALL_LIMIT_MIN = 64 * 1024;

    private final MemorySegment header;
    private final MemorySegment heap;
    private final long heapLength;

    private final long smallLimit;

    /** An allocator whose small blocks are those below 1/256 of the heap, at least 64 KiB. */
    public HeapAllocator(MemorySegment header, MemorySegment heap) {
        this(header, heap, Math.max(SMALL_LIMIT_MIN, heap.byteSize() >>> SMALL_LIMIT_SHIFT));
    }

    /** An allocator that places blocks below {@code smallLimit} bytes from the top (0: none). */
    public HeapAllocator(MemorySegment header, MemorySegment heap, long smallLimit) {
        this.header = header;
        this.heap = heap;
        this.heapLength = heap.byteSize();
        this.smallLimit = smallLimit;
    }

    /** Makes the whole heap one free block. */
    public void formatEmpty() {
        for (int b = 0; b < FREE_BINS; b++) {
            header.set(ValueLayout.JAVA_LONG, freeBinOffset(b), NONE);
        }
        writeBlock(0, heapLength, true, 0);
        pushFree(0, heapLength);
        Atomics.putLongRelease(header, USED_BYTES_OFFSET, 0);
    }

    /**
     * Allocates a block of exactly {@code size} bytes or more (a multiple of 64); returns its offset or -1.
     * Small blocks (below {@link #smallLimit}) go to the high end of the heap, large ones to the low end: of
     * the fits in the lowest bin that has one, a small block takes the one with the highest address and is
     * carved from its top, a large one the lowest and is carved from its bottom. So small objects gather
     * together and the holes they leave when deleted do not cut up the space large ones need.
     */
    public long allocate(long size) {
        if (size <= 0 || size > heapLength || (size & (ALIGNMENT - 1)) != 0) {
            return NONE;
        }
        boolean small = size < smallLimit;
        int bin = binOf(size);
        long found = NONE;
        int scanned = 0;
        for (long b = head(bin); b != NONE && scanned < FIRST_FIT_SCAN_LIMIT; b = nextFree(b), scanned++) {
            if (blockSize(b) >= size && (found == NONE || small == b > found)) {
                found = b;
            }
        }
        for (int higher = bin + 1; found == NONE && higher < FREE_BINS; higher++) {
            int seen = 0;
            for (long b = head(higher); b != NONE && seen < FIRST_FIT_SCAN_LIMIT; b = nextFree(b), seen++) {
                if (found == NONE || small == b > found) {
                    found = b;
                }
            }
        }
        if (found == NONE && scanned == FIRST_FIT_SCAN_LIMIT) {
            // No larger block anywhere: a fit deeper in this bin is the only one left, so look at all of it.
            for (long b = head(bin); b != NONE; b = nextFree(b)) {
                if (blockSize(b) >= size) {
                    found = b;
                    break;
                }
            }
        }
        if (found == NONE) {
            return NONE;
        }
        long have = blockSize(found);
        unlink(found, have);
        long rest = have - size;
        if (rest < MIN_SPLIT) {
            writeBlock(found, have, false, prevSize(found));
            addUsed(have);
            return found;
        }
        addUsed(size);
        if (small) {
            // The rest stays a free block where the old one started; the new block is its upper end.
            long block = found + rest;
            writeBlock(found, rest, true, prevSize(found));
            pushFree(found, rest);
            writeBlock(block, size, false, rest);
            setPrevSizeOfNext(block, size);
            return block;
        }
        writeBlock(found, size, false, prevSize(found));
        writeBlock(found + size, rest, true, size);
        setPrevSizeOfNext(found + size, rest);
        pushFree(found + size, rest);
        return found;
    }

    /** Blocks below this size are small and placed from the top of the heap. */
    public long smallLimit() {
        return smallLimit;
    }

    /** Frees the allocated block at {@code offset}, coalescing with free neighbours. */
    public void free(long offset) {
        checkBlock(offset);
        long size = blockSize(offset);
        if (isFree(offset)) {
            throw new IllegalStateException("double free of heap block at " + offset + " (size " + size + ")");
        }
        addUsed(-size);
        long start = offset;
        long length = size;
        long next = offset + size;
        if (next < heapLength && isFree(next)) {
            long nextSize = blockSize(next);
            unlink(next, nextSize);
            length += nextSize;
        }
        long prevSize = prevSize(offset);
        if (offset > 0 && isFree(offset - prevSize)) {
            start = offset - prevSize;
            unlink(start, prevSize);
            length += prevSize;
        }
        writeBlock(start, length, true, start == 0 ? 0 : prevSize(start));
        if (start != offset) {
            // Merged into its predecessor, this block's own header is not rewritten: set its FREE bit too, so
            // that a second free of this offset is still caught.
            heap.set(ValueLayout.JAVA_LONG, offset + SIZE_OFFSET, size | FREE_BIT);
        }
        setPrevSizeOfNext(start, length);
        pushFree(start, length);
    }

    /** Records which index slot owns the allocated block at {@code offset}. */
    public void setOwner(long offset, int slot) {
        heap.set(ValueLayout.JAVA_LONG, offset + OWNER_SLOT_OFFSET, slot);
    }

    /** The index slot an allocated block claims as its owner (unverified: check the entry names this block). */
    public long ownerOf(long offset) {
        return heap.get(ValueLayout.JAVA_LONG, offset + OWNER_SLOT_OFFSET);
    }

    /** The offset of the block before the one at {@code offset} (a block boundary), or -1 for the first. */
    public long previousBlock(long offset) {
        checkBlock(offset);
        return offset == 0 ? NONE : offset - prevSize(offset);
    }

    /** True when the block at {@code offset} (a block boundary) is free. */
    public boolean isFreeBlock(long offset) {
        checkBlock(offset);
        return isFree(offset);
    }

    /** Size of the block at {@code offset}, checked against the heap. */
    public long blockSize(long offset) {
        long size = heap.get(ValueLayout.JAVA_LONG, offset + SIZE_OFFSET) & ~FREE_BIT;
        Bounds.checkRange("heap block size", offset, size, heapLength);
        return size;
    }

    public long usedBytes() {
        return Atomics.getLongAcquire(header, USED_BYTES_OFFSET);
    }

    public long heapLength() {
        return heapLength;
    }

    /** The largest free block, by walking the top non-empty bin. */
    public long largestFreeBlock() {
        for (int b = FREE_BINS - 1; b >= 0; b--) {
            long best = 0;
            for (long f = head(b); f != NONE; f = nextFree(f)) {
                best = Math.max(best, blockSize(f));
            }
            if (best > 0) {
                return best;
            }
        }
        return 0;
    }

    /**
     * Recreates every block header and free list from the allocated blocks, given as sorted, non-overlapping
     * (offset, size) pairs: {@code blocks[2i]} and {@code blocks[2i+1]}.
     */
    public void rebuild(long[] blocks, int count) {
        for (int b = 0; b < FREE_BINS; b++) {
            header.set(ValueLayout.JAVA_LONG, freeBinOffset(b), NONE);
        }
        long cursor = 0;
        long prev = 0;
        long used = 0;
        for (int i = 0; i < count; i++) {
            long off = blocks[2 * i];
            long size = blocks[2 * i + 1];
            if (off > cursor) {
                writeBlock(cursor, off - cursor, true, prev);
                pushFree(cursor, off - cursor);
                prev = off - cursor;
            }
            writeBlock(off, size, false, prev);
            used += size;
            prev = size;
            cursor = off + size;
        }
        if (cursor < heapLength) {
            writeBlock(cursor, heapLength - cursor, true, prev);
            pushFree(cursor, heapLength - cursor);
        }
        Atomics.putLongRelease(header, USED_BYTES_OFFSET, used);
    }

    /**
     * Walks every block and every free list and reports what is inconsistent (sizes that do not tile the
     * heap, wrong previous sizes, free blocks missing from their bin, used bytes that do not add up). Under
     * the lock; read-only.
     */
    public java.util.List<String> check() {
        java.util.List<String> problems = new java.util.ArrayList<>();
        long offset = 0;
        long prev = 0;
        long used = 0;
        long freeBlocks = 0;
        while (offset < heapLength) {
            long raw = heap.get(ValueLayout.JAVA_LONG, offset + SIZE_OFFSET);
            long size = raw & ~FREE_BIT;
            if (size < ALIGNMENT || (size & (ALIGNMENT - 1)) != 0 || size > heapLength - offset) {
                problems.add("heap block at " + offset + " has size " + size + " (heap " + heapLength + " bytes)");
                return problems;
            }
            if (heap.get(ValueLayout.JAVA_LONG, offset + PREV_SIZE_OFFSET) != prev) {
                problems.add("heap block at " + offset + " records previous size "
                    + heap.get(ValueLayout.JAVA_LONG, offset + PREV_SIZE_OFFSET) + " but the previous block has " + prev);
            }
            if ((raw & FREE_BIT) != 0) {
                freeBlocks++;
            } else {
                used += size;
            }
            prev = size;
            offset += size;
        }
        long listed = 0;
        for (int b = 0; b < FREE_BINS; b++) {
            for (long f = head(b); f != NONE; f = nextFree(f)) {
                if (f < 0 || f >= heapLength || !isFree(f) || binOf(blockSize(f)) != b || ++listed > freeBlocks) {
                    problems.add("free list " + b + " is corrupt at block " + f);
                    break;
                }
            }
        }
        if (listed != freeBlocks) {
            problems.add("free lists hold " + listed + " blocks but the heap has " + freeBlocks + " free blocks");
        }
        if (used != usedBytes()) {
            problems.add("used bytes say " + usedBytes() + " but allocated blocks add up to " + used);
        }
        return problems;
    }

    private void addUsed(long delta) {
        Atomics.putLongRelease(header, USED_BYTES_OFFSET, Atomics.getLongPlain(header, USED_BYTES_OFFSET) + delta);
    }

    private void checkBlock(long offset) {
        if (offset < 0 || offset >= heapLength || (offset & (ALIGNMENT - 1)) != 0) {
            throw new IndexOutOfBoundsException("heap block offset " + offset + " is not a 64-byte aligned offset below "
                + heapLength);
        }
    }

    private boolean isFree(long offset) {
        return (heap.get(ValueLayout.JAVA_LONG, offset + SIZE_OFFSET) & FREE_BIT) != 0;
    }

    private long prevSize(long offset) {
        long p = heap.get(ValueLayout.JAVA_LONG, offset + PREV_SIZE_OFFSET);
        Bounds.checkRange("previous heap block", offset - p, p, heapLength);
        return p;
    }

    private long nextFree(long offset) {
        return heap.get(ValueLayout.JAVA_LONG, offset + NEXT_FREE_OFFSET);
    }

    private long head(int bin) {
        return header.get(ValueLayout.JAVA_LONG, freeBinOffset(bin));
    }

    private void writeBlock(long offset, long size, boolean free, long prevSize) {
        heap.set(ValueLayout.JAVA_LONG, offset + SIZE_OFFSET, size | (free ? FREE_BIT : 0));
        heap.set(ValueLayout.JAVA_LONG, offset + PREV_SIZE_OFFSET, prevSize);
    }

    private void setPrevSizeOfNext(long offset, long size) {
        long next = offset + size;
        if (next < heapLength) {
            heap.set(ValueLayout.JAVA_LONG, next + PREV_SIZE_OFFSET, size);
        }
    }

    private void pushFree(long offset, long size) {
        int bin = binOf(size);
        long oldHead = head(bin);
        heap.set(ValueLayout.JAVA_LONG, offset + NEXT_FREE_OFFSET, oldHead);
        heap.set(ValueLayout.JAVA_LONG, offset + PREV_FREE_OFFSET, NONE);
        if (oldHead != NONE) {
            heap.set(ValueLayout.JAVA_LONG, oldHead + PREV_FREE_OFFSET, offset);
        }
        header.set(ValueLayout.JAVA_LONG, freeBinOffset(bin), offset);
    }

    private void unlink(long offset, long size) {
        long next = nextFree(offset);
        long prev = heap.get(ValueLayout.JAVA_LONG, offset + PREV_FREE_OFFSET);
        if (prev == NONE) {
            header.set(ValueLayout.JAVA_LONG, freeBinOffset(binOf(size)), next);
        } else {
            heap.set(ValueLayout.JAVA_LONG, prev + NEXT_FREE_OFFSET, next);
        }
        if (next != NONE) {
            heap.set(ValueLayout.JAVA_LONG, next + PREV_FREE_OFFSET, prev);
        }
    }
}
