package dev.depot.core.index;

import static dev.depot.core.index.IndexEntryDescriptor.*;
import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.depot.core.testing.DescriptorCoverage;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import org.junit.jupiter.api.Test;

class IndexEntryDescriptorTest {
    static final StructLayout ENTRY = MemoryLayout.structLayout(
        JAVA_LONG.withName("stateWord"),
        MemoryLayout.sequenceLayout(ID_LENGTH, JAVA_BYTE).withName("id"),
        JAVA_INT.withName("metadataLength"),
        JAVA_LONG.withName("blockOffset"),
        JAVA_LONG.withName("dataLength"),
        JAVA_LONG.withName("createTime"),
        JAVA_LONG.withName("lastAccess"));

    @Test
    void shouldDeclareEveryOffsetConstantInTheStruct() throws IllegalAccessException {
        DescriptorCoverage.assertEveryOffsetIsAMember(IndexEntryDescriptor.class, ENTRY);
    }

    @Test
    void shouldPlaceEveryFieldWhereTheDescriptorSays() {
        assertEquals(STATE_WORD_OFFSET, ENTRY.byteOffset(groupElement("stateWord")));
        assertEquals(ID_OFFSET, ENTRY.byteOffset(groupElement("id")));
        assertEquals(METADATA_LENGTH_OFFSET, ENTRY.byteOffset(groupElement("metadataLength")));
        assertEquals(BLOCK_OFFSET_OFFSET, ENTRY.byteOffset(groupElement("blockOffset")));
        assertEquals(DATA_LENGTH_OFFSET, ENTRY.byteOffset(groupElement("dataLength")));
        assertEquals(CREATE_TIME_OFFSET, ENTRY.byteOffset(groupElement("createTime")));
        assertEquals(LAST_ACCESS_OFFSET, ENTRY.byteOffset(groupElement("lastAccess")));
        assertEquals(ENTRY_LENGTH, ENTRY.byteSize());
    }

    @Test
    void shouldAlignAtomicFieldsNaturallyInEverySlot() {
        // Entries start at multiples of ENTRY_LENGTH, so alignment within one entry is alignment everywhere.
        assertEquals(0, ENTRY_LENGTH % Long.BYTES);
        assertEquals(0, STATE_WORD_OFFSET % Long.BYTES);
        assertEquals(0, LAST_ACCESS_OFFSET % Long.BYTES);
        assertEquals(ENTRY_LENGTH * 5L, entryOffset(5));
    }

    @Test
    void shouldRoundTripGenerationOwnerAndStateThroughTheStateWord() {
        for (EntryState st : EntryState.values()) {
            long sw = stateWord(0x8000_0001, 0xfffe, st);
            assertEquals(st, state(sw));
            assertEquals(0xfffe, owner(sw));
            assertEquals(0x8000_0001, generation(sw));
        }
        assertEquals(0L, stateWord(0, 0, EntryState.EMPTY), "a zeroed entry must read as EMPTY");
    }

    @Test
    void shouldRejectAnUnknownStateCodeAsCorruption() {
        var e = assertThrows(IllegalStateException.class, () -> state(0x0a));
        assertEquals("corrupt index entry: unknown state code 10 (known 0..9); run `depot doctor`", e.getMessage());
    }

    @Test
    void shouldKeepTheIndexAtMostThreeQuartersFull() {
        assertEquals(12, maxObjects(16));
        assertEquals(3L << 20, maxObjects(4 << 20));
    }
}
