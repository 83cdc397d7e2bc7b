package dev.depot.core.memory;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.foreign.Arena;
import org.junit.jupiter.api.Test;

class BoundsTest {
    @Test
    void shouldAcceptRangesUpToTheCapacity() {
        assertDoesNotThrow(() -> Bounds.checkRange("x", 0, 10, 10));
        assertDoesNotThrow(() -> Bounds.checkRange("x", 10, 0, 10));
    }

    @Test
    void shouldRejectRangesThatWouldOverflowNamingWhatWasChecked() {
        var e = assertThrows(IndexOutOfBoundsException.class, () -> Bounds.checkRange("object data", 8, Long.MAX_VALUE, 16));
        assertEquals("object data: offset=8 length=" + Long.MAX_VALUE + " capacity=16", e.getMessage());
        assertThrows(IndexOutOfBoundsException.class, () -> Bounds.checkRange("x", -1, 1, 16));
        assertThrows(IndexOutOfBoundsException.class, () -> Bounds.checkRange("x", 17, 0, 16));
        assertThrows(IndexOutOfBoundsException.class, () -> Bounds.checkRange("x", 0, -1, 16));
    }

    @Test
    void shouldCheckIndicesAgainstTheirLimit() {
        assertEquals(3, Bounds.checkIndex("slot", 3, 4));
        var e = assertThrows(IndexOutOfBoundsException.class, () -> Bounds.checkIndex("slot", 4, 4));
        assertEquals("slot: index=4 limit=4", e.getMessage());
    }

    @Test
    void shouldAlignUp() {
        assertEquals(0, Bounds.alignUp(0, 64));
        assertEquals(64, Bounds.alignUp(1, 64));
        assertEquals(4096, Bounds.alignUp(4096, 4096));
    }

    @Test
    void shouldRefuseAMisalignedAtomicField() {
        try (Arena arena = Arena.ofConfined()) {
            var s = arena.allocate(64, 8);
            assertDoesNotThrow(() -> Atomics.checkAligned(s, 8, 8, "word"));
            var e = assertThrows(IllegalStateException.class, () -> Atomics.checkAligned(s, 4, 8, "word"));
            assertEquals("word at offset 4 is not aligned to 8 bytes (address 0x" + Long.toHexString(s.address() + 4) + ")",
                e.getMessage());
        }
    }
}
