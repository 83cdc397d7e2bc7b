package dev.depot.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.core.index.IndexEntryDescriptor;
import dev.depot.core.index.ObjectIndex;
import java.lang.foreign.Arena;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class LookupFloorTest {
    private static final int SLOTS = 64;

    private static byte[] id(long w0) {
        byte[] raw = new byte[20];
        ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN).putLong(w0);
        return raw;
    }

    /** Two first words whose ids share a home slot in an index of {@link #SLOTS} entries. */
    private static long[] collidingWords() {
        try (Arena arena = Arena.ofConfined()) {
            ObjectIndex homes = new ObjectIndex(arena.allocate((long) SLOTS * IndexEntryDescriptor.ENTRY_LENGTH,
                IndexEntryDescriptor.ENTRY_LENGTH), SLOTS);
            int[] firstWithHome = new int[SLOTS];
            Arrays.fill(firstWithHome, -1);
            for (int w0 = 0; ; w0++) {
                int home = homes.home(w0, 0);
                if (firstWithHome[home] >= 0) {
                    return new long[] {firstWithHome[home], w0};
                }
                firstWithHome[home] = w0;
            }
        }
    }

    @Test
    void shouldPlaceACollidingIdInTheNextSlotAndCountTheEntriesALookupReads() throws Exception {
        long[] words = collidingWords();
        try (LookupFloor floor = new LookupFloor(SLOTS)) {
            floor.insert(id(words[0]));
            floor.insert(id(words[1]));
            assertEquals(1.5, floor.linesPerLookup()); // the first at its home, the second one slot on
            int[] next = {0};
            assertTrue(floor.p50Nanos(10, () -> next[0]++ % 2, n -> id(words[(int) n])) >= 0);
        }
    }

    @Test
    void shouldRejectALookupOfAnIdNeverInserted() throws Exception {
        try (LookupFloor floor = new LookupFloor(SLOTS)) {
            floor.insert(id(1));
            assertThrows(IllegalArgumentException.class, () -> floor.p50Nanos(1, () -> 0, n -> id(2)));
        }
    }

    @Test
    void shouldRemoveItsFileWhenClosed() throws Exception {
        Path dir;
        try (LookupFloor floor = new LookupFloor(SLOTS)) {
            dir = floor.directory();
            assertTrue(Files.exists(dir));
        }
        assertFalse(Files.exists(dir));
    }
}
