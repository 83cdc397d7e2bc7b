package dev.depot.core.clients;

import static dev.depot.core.clients.ClientTableDescriptor.*;
import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.MemoryLayout.PathElement.sequenceElement;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.core.testing.DescriptorCoverage;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import org.junit.jupiter.api.Test;

class ClientTableDescriptorTest {
    static StructLayout slot(int pins) {
        StructLayout fixed = MemoryLayout.structLayout(
            JAVA_LONG.withName("identity"),
            JAVA_INT.withName("pinHighWater"),
            JAVA_INT.withName("kind"),
            JAVA_LONG.withName("registeredAt"));
        return MemoryLayout.structLayout(
            JAVA_LONG.withName("identity"),
            JAVA_INT.withName("pinHighWater"),
            JAVA_INT.withName("kind"),
            JAVA_LONG.withName("registeredAt"),
            MemoryLayout.paddingLayout(64 - fixed.byteSize()),
            JAVA_LONG.withName("creates"),
            JAVA_LONG.withName("gets"),
            JAVA_LONG.withName("deletes"),
            JAVA_LONG.withName("waits"),
            JAVA_LONG.withName("wakeups"),
            MemoryLayout.paddingLayout(128 - 64 - 5 * 8),
            MemoryLayout.sequenceLayout(pins, JAVA_LONG).withName("pinRecords"));
    }

    @Test
    void shouldDeclareEveryOffsetConstantInTheStruct() throws IllegalAccessException {
        DescriptorCoverage.assertEveryOffsetIsAMember(ClientTableDescriptor.class, slot(4));
    }

    @Test
    void shouldPlaceEveryFieldWhereTheDescriptorSays() {
        StructLayout s = slot(7);
        assertEquals(IDENTITY_OFFSET, s.byteOffset(groupElement("identity")));
        assertEquals(PIN_HIGH_WATER_OFFSET, s.byteOffset(groupElement("pinHighWater")));
        assertEquals(KIND_OFFSET, s.byteOffset(groupElement("kind")));
        assertEquals(REGISTERED_AT_OFFSET, s.byteOffset(groupElement("registeredAt")));
        assertEquals(PIN_RECORDS_OFFSET, s.byteOffset(groupElement("pinRecords")));
        for (int r = 0; r < 7; r++) {
            assertEquals(pinRecordOffset(r), s.byteOffset(groupElement("pinRecords"), sequenceElement(r)));
        }
    }

    @Test
    void shouldRoundSlotsTo128BytesSoThatNoTwoProcessesShareALine() {
        for (int pins = 1; pins <= 100; pins++) {
            long len = slotLength(pins);
            assertEquals(0, len % 128, "slot of " + pins + " pins");
            assertTrue(len >= slot(pins).byteSize(), "slot of " + pins + " pins is too short");
            assertTrue(len < slot(pins).byteSize() + 128);
        }
        assertEquals(10 * slotLength(3), tableLength(10, 3));
    }

    @Test
    void shouldPackPinRecordsThatAreNeverZero() {
        assertNotEquals(0L, pinRecord(0, 0));
        assertEquals(0, pinnedSlot(pinRecord(0, 0)));
        long r = pinRecord(123_456, 0xffff_fff0);
        assertEquals(123_456, pinnedSlot(r));
        assertEquals(0xffff_fff0, (int) r);
    }
}
