package dev.depot.core.heap;

import static dev.depot.core.heap.HeapBlockDescriptor.ALIGNMENT;
import static dev.depot.core.heap.HeapBlockDescriptor.NONE;
import static dev.depot.core.heap.HeapBlockDescriptor.binOf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.core.store.StoreHeaderDescriptor;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The allocator on plain native memory (no file): a header and a heap. */
class HeapAllocatorTest {
    private static final long HEAP = 1L << 20;

    private Arena arena;
    private MemorySegment header;
    private MemorySegment heap;
    private HeapAllocator allocator;

    @BeforeEach
    void format() {
        arena = Arena.ofConfined();
        header = arena.allocate(StoreHeaderDescriptor.HEADER_LENGTH, 128);
        heap = arena.allocate(HEAP, ALIGNMENT);
        // Nothing is small here, so every block is placed from the bottom (the layout the tests below draw);
        // the model tests and the placement tests set their own limit.
        allocator = new HeapAllocator(header, heap, 0);
        allocator.formatEmpty();
    }

    /** Makes blocks below {@code smallLimit} small (placed from the top) for the rest of the test. */
    private void useSmallLimit(long smallLimit) {
        allocator = new HeapAllocator(header, heap, smallLimit);
        allocator.formatEmpty();
    }

    @AfterEach
    void free() {
        arena.close();
    }

    @Test
    void shouldStartAsOneFreeBlockCoveringTheHeap() {
        assertEquals(0, allocator.usedBytes());
        assertEquals(HEAP, allocator.largestFreeBlock());
        assertEquals(HEAP, allocator.blockSize(0));
    }

    @Test
    void shouldSplitTheRestOfABlockIntoAFreeBlock() {
        long a = allocator.allocate(192);
        assertEquals(0, a);
        assertEquals(192, allocator.blockSize(a));
        assertEquals(HEAP - 192, allocator.blockSize(192));
        assertEquals(HEAP - 192, allocator.largestFreeBlock());
        assertEquals(192, allocator.usedBytes());
    }

    @Test
    void shouldRejectSizesThatAreNotPositiveMultiplesOf64OrLargerThanTheHeap() {
        assertEquals(NONE, allocator.allocate(0));
        assertEquals(NONE, allocator.allocate(-64));
        assertEquals(NONE, allocator.allocate(100));
        assertEquals(NONE, allocator.allocate(HEAP + 64));
        assertEquals(0, allocator.usedBytes());
    }

    @Test
    void shouldHandOutTheWholeHeapAndThenNothing() {
        assertEquals(0, allocator.allocate(HEAP));
        assertEquals(NONE, allocator.allocate(64));
        assertEquals(0, allocator.largestFreeBlock());
        allocator.free(0);
        assertEquals(HEAP, allocator.largestFreeBlock());
    }

    @Test
    void shouldCoalesceFreedNeighboursOnBothSides() {
        long a = allocator.allocate(128);
        long b = allocator.allocate(256);
        long c = allocator.allocate(512);
        long d = allocator.allocate(64);
        allocator.free(a);
        allocator.free(c);
        assertEquals(512, allocator.blockSize(c), "c stays alone between allocated b and d");
        assertEquals(HEAP - 960, allocator.largestFreeBlock());
        allocator.free(b);
        assertEquals(128 + 256 + 512, allocator.blockSize(a), "a, b and c are one free block");
        assertEquals(64, allocator.usedBytes());
        allocator.free(d);
        assertEquals(HEAP, allocator.blockSize(0));
        assertEquals(HEAP, allocator.largestFreeBlock());
        assertEquals(0, allocator.usedBytes());
    }

    @Test
    void shouldCoalesceWithTheFollowingFreeBlock() {
        long a = allocator.allocate(128);
        long b = allocator.allocate(128);
        allocator.free(b);
        assertEquals(HEAP - 128, allocator.blockSize(b), "b merged with the free tail");
        allocator.free(a);
        assertEquals(HEAP, allocator.blockSize(a));
    }

    @Test
    void shouldCoalesceWithThePrecedingFreeBlock() {
        long a = allocator.allocate(128);
        long b = allocator.allocate(128);
        long c = allocator.allocate(128);
        allocator.free(a);
        allocator.free(b);
        assertEquals(256, allocator.blockSize(a), "b merged into a");
        assertEquals(128, allocator.usedBytes());
        assertEquals(256, c);
        assertEquals(a, allocator.allocate(256));
    }

    @Test
    void shouldReuseAFreedBlockFromItsOwnBinBeforeSplittingALargerOne() {
        long a = allocator.allocate(384);
        long fence = allocator.allocate(64);
        allocator.free(a);
        assertEquals(binOf(384), binOf(320));
        assertEquals(a, allocator.allocate(320), "first fit in bin " + binOf(320));
        assertEquals(64, allocator.blockSize(a + 320), "the 64-byte rest is a free block of its own");
        assertTrue(fence > a);
    }

    @Test
    void shouldTakeALargerBinWhenItsOwnBinHasNoFit() {
        long small = allocator.allocate(256);
        long fence = allocator.allocate(64);
        allocator.free(small);
        long big = allocator.allocate(4096);
        assertTrue(big > fence, "256-byte hole is too small for 4096");
        assertEquals(small, allocator.allocate(256));
    }

    @Test
    void shouldReportTheLargestFreeBlockAcrossFragments() {
        List<Long> blocks = new ArrayList<>();
        long b;
        while ((b = allocator.allocate(1024)) != NONE) {
            blocks.add(b);
        }
        assertEquals(0, allocator.largestFreeBlock());
        allocator.free(blocks.get(3));
        allocator.free(blocks.get(10));
        allocator.free(blocks.get(11));
        allocator.free(blocks.get(12));
        assertEquals(3 * 1024, allocator.largestFreeBlock());
        assertEquals(NONE, allocator.allocate(4 * 1024));
        assertEquals(blocks.get(10), allocator.allocate(3 * 1024));
    }

    @Test
    void shouldDetectADoubleFree() {
        long a = allocator.allocate(128);
        allocator.allocate(128);
        allocator.free(a);
        var e = assertThrows(IllegalStateException.class, () -> allocator.free(a));
        assertEquals("double free of heap block at 0 (size 128)", e.getMessage());
        assertEquals(128, allocator.usedBytes());
    }

    @Test
    void shouldDetectADoubleFreeOfABlockMergedIntoItsPredecessor() {
        long a = allocator.allocate(128);
        long b = allocator.allocate(128);
        allocator.allocate(128);
        allocator.free(a);
        allocator.free(b);
        assertThrows(IllegalStateException.class, () -> allocator.free(b));
        assertEquals(128, allocator.usedBytes());
        assertEquals(256, allocator.blockSize(a));
    }

    @Test
    void shouldRejectAnOffsetThatIsMisalignedOrOutsideTheHeap() {
        allocator.allocate(128);
        var e = assertThrows(IndexOutOfBoundsException.class, () -> allocator.free(65));
        assertEquals("heap block offset 65 is not a 64-byte aligned offset below " + HEAP, e.getMessage());
        assertThrows(IndexOutOfBoundsException.class, () -> allocator.free(HEAP));
        assertThrows(IndexOutOfBoundsException.class, () -> allocator.free(-64));
    }

    @Test
    void shouldPlaceSmallBlocksFromTheTopAndLargeOnesFromTheBottom() {
        useSmallLimit(4096);
        long small = allocator.allocate(128);
        long large = allocator.allocate(8192);
        assertEquals(HEAP - 128, small, "a small block is carved from the top of the free block");
        assertEquals(0, large, "a large block from its bottom");
        assertEquals(HEAP - 128 - 8192, allocator.largestFreeBlock(), "the free space between stays one block");
        assertEquals(HEAP - 128 - 256, allocator.allocate(256), "the next small block sits below the first");
    }

    @Test
    void shouldGiveASmallBlockTheHighestFitOfTheLowestBinThatHasOneAndALargeBlockTheLowest() {
        useSmallLimit(4096);
        long[] holes = new long[3];
        // From the bottom: hole, spacer, hole, spacer, hole, spacer, then the rest of the heap (a larger bin).
        for (int i = 0; i < 3; i++) {
            holes[i] = allocator.allocate(8192);
            allocator.allocate(8192);
        }
        for (long hole : holes) {
            allocator.free(hole);
        }
        assertEquals(holes[0], allocator.allocate(8192), "large: the lowest 8 KiB hole");
        assertEquals(holes[2] + 8192 - 4032, allocator.allocate(4032),
            "small: the top of the highest 8 KiB hole, not the large free block above it");
        assertEquals(holes[2] + 8192 - 4032 - 2048, allocator.allocate(2048), "small: below it, in the same hole");
        assertEquals(List.of(), allocator.check());
    }

    @Test
    void shouldMatchASimpleModelUnderRandomAllocationsAndFrees() {
        useSmallLimit(8 * ALIGNMENT);
        var random = new SplittableRandom(42);
        TreeMap<Long, Long> model = new TreeMap<>();
        for (int step = 0; step < 20_000; step++) {
            randomStep(random, model);
            if (step % 97 == 0) {
                checkAgainstModel(model);
            }
        }
        checkAgainstModel(model);
    }

    @Test
    void shouldRebuildFromTheLiveBlocksTheSameFreeSpaceAsTheModel() {
        useSmallLimit(8 * ALIGNMENT);
        var random = new SplittableRandom(7);
        TreeMap<Long, Long> model = new TreeMap<>();
        for (int round = 0; round < 20; round++) {
            for (int step = 0; step < 500; step++) {
                randomStep(random, model);
            }
            // A crash leaves headers and free lists in any state: scribble over both, then rebuild from the truth.
            heap.fill((byte) random.nextInt(256));
            for (int bin = 0; bin < StoreHeaderDescriptor.FREE_BINS; bin++) {
                header.set(java.lang.foreign.ValueLayout.JAVA_LONG, StoreHeaderDescriptor.freeBinOffset(bin), random.nextLong());
            }
            long[] blocks = new long[2 * model.size()];
            int i = 0;
            for (Map.Entry<Long, Long> e : model.entrySet()) {
                blocks[i++] = e.getKey();
                blocks[i++] = e.getValue();
            }
            allocator.rebuild(blocks, model.size());
            checkAgainstModel(model);
        }
    }

    /** Allocates (60%) a random size or frees a random live block, updating the model. */
    private void randomStep(SplittableRandom random, TreeMap<Long, Long> model) {
        if (model.isEmpty() || random.nextInt(10) < 6) {
            long size = ALIGNMENT * (random.nextInt(4) == 0 ? 1 + random.nextInt(512) : 1 + random.nextInt(16));
            long at = allocator.allocate(size);
            if (at == NONE) {
                long biggerBin = 1L << (binOf(size) + 1);
                for (long gap : gaps(model)) {
                    assertTrue(gap < biggerBin, "allocate(" + size + ") failed but a free block of " + gap + " exists");
                }
                return;
            }
            assertEquals(size, allocator.blockSize(at), "block at " + at);
            var before = model.floorEntry(at);
            assertTrue(before == null || before.getKey() + before.getValue() <= at, "overlaps " + before);
            var after = model.ceilingEntry(at);
            assertTrue(after == null || at + size <= after.getKey(), "overlaps " + after);
            assertTrue(at >= 0 && at + size <= HEAP && at % ALIGNMENT == 0);
            model.put(at, size);
        } else {
            Long[] offsets = model.keySet().toArray(new Long[0]);
            long at = offsets[random.nextInt(offsets.length)];
            allocator.free(at);
            model.remove(at);
        }
    }

    /** The free gaps between allocated blocks, which coalescing must keep as single free blocks. */
    private static List<Long> gaps(TreeMap<Long, Long> model) {
        List<Long> gaps = new ArrayList<>();
        long cursor = 0;
        for (Map.Entry<Long, Long> e : model.entrySet()) {
            if (e.getKey() > cursor) {
                gaps.add(e.getKey() - cursor);
            }
            cursor = e.getKey() + e.getValue();
        }
        if (cursor < HEAP) {
            gaps.add(HEAP - cursor);
        }
        return gaps;
    }

    /** Walks the heap block by block: allocated blocks are the model's, every gap is exactly one free block. */
    private void checkAgainstModel(TreeMap<Long, Long> model) {
        long used = 0;
        for (long size : model.values()) {
            used += size;
        }
        assertEquals(used, allocator.usedBytes());
        long offset = 0;
        long largestGap = 0;
        while (offset < HEAP) {
            long size = allocator.blockSize(offset);
            Long live = model.get(offset);
            if (live != null) {
                assertEquals(live, size, "allocated block at " + offset);
            } else {
                var next = model.ceilingEntry(offset);
                long gap = (next == null ? HEAP : next.getKey()) - offset;
                assertEquals(gap, size, "free block at " + offset + " is not the whole gap (missed coalescing)");
                largestGap = Math.max(largestGap, gap);
            }
            offset += size;
        }
        assertEquals(HEAP, offset, "blocks cover the heap exactly");
        assertEquals(largestGap, allocator.largestFreeBlock());
    }
}
