package dev.depot.core.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.core.memory.Atomics;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The ring of restore failure records in the store header: one record per entry, wrapping, and bounds-checked. */
class RestoreFailuresTest {
    private final MemorySegment header = Arena.ofAuto().allocate(StoreHeaderDescriptor.HEADER_LENGTH, 64);
    private final RestoreFailures failures = new RestoreFailures(header);
    private final byte[] id = new byte[RestoreFailureDescriptor.ID_LENGTH];

    @Test
    void shouldFindARecordByItsSlotAndGenerationOnly() {
        assertNull(failures.find(3, 7), "a fresh header holds no failures");
        failures.record(3, 7, id, RestoreFailureDescriptor.KIND_LOST, "spill file x is damaged: it is missing");
        RestoreFailures.Failure f = failures.find(3, 7);
        assertTrue(f.lost());
        assertEquals("spill file x is damaged: it is missing", f.reason());
        assertNull(failures.find(3, 8), "a later object in the same slot is not taken for the lost one");
        assertNull(failures.find(4, 7));
        assertEquals(1, Atomics.getLongVolatile(header, StoreHeaderDescriptor.RESTORE_FAILURE_COUNT_OFFSET));
    }

    @Test
    void shouldRewriteTheRecordOfTheSameEntryAndWithdrawIt() {
        failures.record(1, 1, id, RestoreFailureDescriptor.KIND_NO_ROOM, "no room");
        failures.record(1, 1, id, RestoreFailureDescriptor.KIND_LOST, "damaged");
        assertEquals("damaged", failures.find(1, 1).reason());
        assertEquals(1, Atomics.getLongVolatile(header, StoreHeaderDescriptor.RESTORE_FAILURE_COUNT_OFFSET),
            "one entry, one record");
        failures.clear(1, 1);
        assertNull(failures.find(1, 1), "withdrawn: it was restored after all");
    }

    @Test
    void shouldKeepTheLatestFailuresWhenTheRingWraps() {
        int n = StoreHeaderDescriptor.RESTORE_FAILURES;
        for (int slot = 0; slot < n + 2; slot++) {
            failures.record(slot, 1, id, RestoreFailureDescriptor.KIND_LOST, "slot " + slot);
        }
        assertNull(failures.find(0, 1));
        assertNull(failures.find(1, 1));
        for (int slot = 2; slot < n + 2; slot++) {
            assertEquals("slot " + slot, failures.find(slot, 1).reason());
        }
    }

    @Test
    void shouldCutAReasonToWholeCharactersWithinItsCapacity() {
        String reason = "é".repeat(RestoreFailureDescriptor.REASON_MAX);
        failures.record(0, 1, id, RestoreFailureDescriptor.KIND_LOST, reason);
        String read = failures.find(0, 1).reason();
        assertEquals(RestoreFailureDescriptor.REASON_MAX / 2, read.length());
        assertTrue(read.getBytes(StandardCharsets.UTF_8).length <= RestoreFailureDescriptor.REASON_MAX);
    }

    @Test
    void shouldRefuseACorruptReasonLength() {
        failures.record(0, 1, id, RestoreFailureDescriptor.KIND_LOST, "damaged");
        header.set(ValueLayout.JAVA_INT_UNALIGNED, RestoreFailureDescriptor.recordOffset(0)
            + RestoreFailureDescriptor.REASON_LENGTH_OFFSET, RestoreFailureDescriptor.REASON_MAX + 1);
        var e = assertThrows(IllegalStateException.class, () -> failures.find(0, 1));
        assertTrue(e.getMessage().contains("reason length 209 exceeds its capacity of 208 bytes"), e.getMessage());
    }
}
