package dev.depot.core.notify;

import static dev.depot.core.notify.EventRecordDescriptor.*;
import static dev.depot.core.notify.NotificationDescriptor.*;
import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.MemoryLayout.PathElement.sequenceElement;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import dev.depot.core.testing.DescriptorCoverage;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The region, a ring and a record as FFM structs drawn from the descriptors' diagrams. */
class NotificationDescriptorTest {
    static final StructLayout RECORD = MemoryLayout.structLayout(
        JAVA_LONG.withName("stamp"),
        JAVA_INT.withName("type"),
        JAVA_INT.withName("metadataLength"),
        JAVA_LONG.withName("dataLength"),
        MemoryLayout.sequenceLayout(ID_LENGTH, java.lang.foreign.ValueLayout.JAVA_BYTE).withName("id"),
        JAVA_INT.withName("publisherPid"),
        JAVA_LONG.withName("time"),
        MemoryLayout.paddingLayout(8));
    static final StructLayout RING = MemoryLayout.structLayout(
        MemoryLayout.structLayout(
            JAVA_LONG.withName("owner"),
            JAVA_LONG.withName("subscribedAt"),
            JAVA_LONG.withName("head"),
            JAVA_INT.withName("sleeping"),
            MemoryLayout.paddingLayout(128 - 28)).withName("subscriber"),
        MemoryLayout.structLayout(
            JAVA_LONG.withName("tail"),
            JAVA_LONG.withName("missed"),
            JAVA_INT.withName("wakeSequence"),
            MemoryLayout.paddingLayout(128 - 20)).withName("publishers"),
        MemoryLayout.sequenceLayout(RING_RECORDS, RECORD).withName("records"));
    static final StructLayout REGION = MemoryLayout.structLayout(
        JAVA_INT.withName("activeMask"),
        MemoryLayout.paddingLayout(REGION_HEADER_LENGTH - 4),
        MemoryLayout.sequenceLayout(SUBSCRIBERS, RING).withName("rings"));

    @Test
    void shouldPlaceTheRingAndRegionWhereTheDescriptorSays() {
        assertEquals(RECORDS_OFFSET, RING.byteOffset(groupElement("records")));
        assertEquals(RING_LENGTH, RING.byteSize());
        assertEquals(REGION_LENGTH, REGION.byteSize());
        assertEquals(ringOffset(3), REGION.byteOffset(groupElement("rings"), sequenceElement(3)));
        assertEquals(ringOffset(1) + recordOffset(5), REGION.byteOffset(groupElement("rings"), sequenceElement(1),
            groupElement("records"), sequenceElement(5)));
    }

    @Test
    void shouldDeclareEveryRingOffsetInTheStruct() throws IllegalAccessException {
        // The region header's one field (offset 0 of the region) beside the ring's first group (offset 0 of a ring).
        StructLayout coverage = MemoryLayout.structLayout(
            MemoryLayout.unionLayout(RING.memberLayouts().getFirst(),
                MemoryLayout.structLayout(JAVA_INT.withName("activeMask")).withName("regionHeader")).withName("first"),
            RING.memberLayouts().get(1), RING.memberLayouts().get(2));
        DescriptorCoverage.assertEveryOffsetIsAMember(NotificationDescriptor.class, coverage);
    }

    @Test
    void shouldDeclareEveryRecordOffsetInTheStruct() throws IllegalAccessException {
        DescriptorCoverage.assertEveryOffsetIsAMember(EventRecordDescriptor.class, RECORD);
        assertEquals(RECORD_LENGTH, RECORD.byteSize());
    }

    @Test
    void shouldTellEveryStampApartAndReadItBack() {
        Set<Long> seen = new HashSet<>();
        for (long lap : new long[] {0, 1, 2, LAP_MASK}) {
            for (int kind = KIND_FREE; kind <= KIND_ABORTED; kind++) {
                long s = stamp(lap, kind, 7);
                assertEquals(lap, EventRecordDescriptor.lapOf(s));
                assertEquals(kind, kindOf(s));
                if (kind == KIND_CLAIMED) {
                    assertEquals(7, claimerOf(s));
                }
                assertEquals(true, seen.add(s));
            }
        }
        assertEquals(0, stamp(0, KIND_FREE, 0), "a zero-filled region is FREE(0) everywhere");
        assertNotEquals(stamp(0, KIND_CLAIMED, 0), stamp(0, KIND_CLAIMED, 1));
        assertEquals(0xffff - 1, claimerOf(stamp(3, KIND_CLAIMED, 0xffff - 1)));
    }

    @Test
    void shouldMapPositionsToCellsAndLaps() {
        assertEquals(RECORDS_OFFSET, recordOffset(0));
        assertEquals(RECORDS_OFFSET, recordOffset(RING_RECORDS));
        assertEquals(RECORDS_OFFSET + RECORD_LENGTH, recordOffset(RING_RECORDS + 1));
        assertEquals(1, NotificationDescriptor.lapOf(RING_RECORDS));
    }
}
