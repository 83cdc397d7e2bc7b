package dev.depot.core.heap;

import static dev.depot.core.heap.HeapBlockDescriptor.*;
import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.depot.core.testing.DescriptorCoverage;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import org.junit.jupiter.api.Test;

class HeapBlockDescriptorTest {
    static final StructLayout BLOCK_HEADER = MemoryLayout.structLayout(
        JAVA_LONG.withName("size"),
        JAVA_LONG.withName("prevSize"),
        JAVA_LONG.withName("nextFree"),
        JAVA_LONG.withName("prevFree"),
        JAVA_LONG.withName("ownerSlot"),
        MemoryLayout.paddingLayout(24));

    @Test
    void shouldDeclareEveryOffsetConstantInTheStruct() throws IllegalAccessException {
        DescriptorCoverage.assertEveryOffsetIsAMember(HeapBlockDescriptor.class, BLOCK_HEADER);
    }

    @Test
    void shouldPlaceEveryFieldWhereTheDescriptorSays() {
        assertEquals(SIZE_OFFSET, BLOCK_HEADER.byteOffset(groupElement("size")));
        assertEquals(PREV_SIZE_OFFSET, BLOCK_HEADER.byteOffset(groupElement("prevSize")));
        assertEquals(NEXT_FREE_OFFSET, BLOCK_HEADER.byteOffset(groupElement("nextFree")));
        assertEquals(PREV_FREE_OFFSET, BLOCK_HEADER.byteOffset(groupElement("prevFree")));
        assertEquals(OWNER_SLOT_OFFSET, BLOCK_HEADER.byteOffset(groupElement("ownerSlot")));
        assertEquals(HEADER_LENGTH, BLOCK_HEADER.byteSize());
        assertEquals(0, HEADER_LENGTH % ALIGNMENT, "object data must start 64-byte aligned");
    }

    @Test
    void shouldSizeBlocksAsHeaderPlusDataPlusMetadataRoundedTo64() {
        assertEquals(64, blockSizeFor(0, 0));
        assertEquals(128, blockSizeFor(1, 0));
        assertEquals(128, blockSizeFor(60, 4));
        assertEquals(192, blockSizeFor(60, 5));
        assertEquals(64 + 4096, blockSizeFor(4096, 0));
    }

    @Test
    void shouldBinBlocksByFloorOfLog2() {
        assertEquals(6, binOf(64));
        assertEquals(6, binOf(127));
        assertEquals(7, binOf(128));
        assertEquals(20, binOf(1L << 20));
        assertEquals(62, binOf(Long.MAX_VALUE & -64L));
    }
}
