package dev.depot.server.protocol;

import static dev.depot.server.protocol.MessageDescriptor.*;
import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

/** The descriptors agree with the layouts drawn in docs/PROTOCOL.md (which the Python client follows). */
class ProtocolDescriptorTest {
    private static final StructLayout HEADER = MemoryLayout.structLayout(
        ValueLayout.JAVA_INT_UNALIGNED.withName("length"),
        ValueLayout.JAVA_SHORT_UNALIGNED.withName("type"),
        ValueLayout.JAVA_SHORT_UNALIGNED.withName("flags"),
        ValueLayout.JAVA_LONG_UNALIGNED.withName("requestId"));

    private static final StructLayout LOCATION = MemoryLayout.structLayout(
        ValueLayout.JAVA_LONG_UNALIGNED.withName("dataOffset"),
        ValueLayout.JAVA_LONG_UNALIGNED.withName("dataSize"),
        ValueLayout.JAVA_LONG_UNALIGNED.withName("metadataOffset"),
        ValueLayout.JAVA_INT_UNALIGNED.withName("metadataLength"),
        ValueLayout.JAVA_INT_UNALIGNED.withName("found"),
        ValueLayout.JAVA_LONG_UNALIGNED.withName("handle"));

    private static final StructLayout ENTRY = MemoryLayout.structLayout(
        MemoryLayout.sequenceLayout(ID_LENGTH, ValueLayout.JAVA_BYTE).withName("id"),
        ValueLayout.JAVA_INT_UNALIGNED.withName("state"),
        ValueLayout.JAVA_INT_UNALIGNED.withName("metadataLength"),
        ValueLayout.JAVA_INT_UNALIGNED.withName("pins"),
        ValueLayout.JAVA_LONG_UNALIGNED.withName("dataSize"),
        ValueLayout.JAVA_LONG_UNALIGNED.withName("created"),
        ValueLayout.JAVA_LONG_UNALIGNED.withName("lastAccess"));

    private static long offset(StructLayout s, String field) {
        return s.byteOffset(groupElement(field));
    }

    @Test
    void shouldLayTheFrameHeaderOutAsDocumented() {
        assertEquals(offset(HEADER, "length"), FrameDescriptor.LENGTH_OFFSET);
        assertEquals(offset(HEADER, "type"), FrameDescriptor.TYPE_OFFSET);
        assertEquals(offset(HEADER, "flags"), FrameDescriptor.FLAGS_OFFSET);
        assertEquals(offset(HEADER, "requestId"), FrameDescriptor.REQUEST_ID_OFFSET);
        assertEquals(HEADER.byteSize(), FrameDescriptor.HEADER_LENGTH);
        assertEquals(12, FrameDescriptor.MIN_LENGTH);
        assertEquals(1_114_112, FrameDescriptor.MAX_BODY_LENGTH);
    }

    @Test
    void shouldLayLocationsAndListEntriesOutAsDocumented() {
        assertEquals(offset(LOCATION, "dataSize"), LOCATION_DATA_SIZE_OFFSET);
        assertEquals(offset(LOCATION, "metadataOffset"), LOCATION_METADATA_OFFSET_OFFSET);
        assertEquals(offset(LOCATION, "metadataLength"), LOCATION_METADATA_LENGTH_OFFSET);
        assertEquals(offset(LOCATION, "found"), LOCATION_FOUND_OFFSET);
        assertEquals(offset(LOCATION, "handle"), LOCATION_HANDLE_OFFSET);
        assertEquals(LOCATION.byteSize(), LOCATION_LENGTH);
        assertEquals(offset(ENTRY, "state"), ENTRY_STATE_OFFSET);
        assertEquals(offset(ENTRY, "pins"), ENTRY_PINS_OFFSET);
        assertEquals(offset(ENTRY, "lastAccess"), ENTRY_ACCESS_MILLIS_OFFSET);
        assertEquals(ENTRY.byteSize(), ENTRY_LENGTH);
        assertEquals(19_894, LIST_ENTRIES_PER_FRAME);
    }

    @Test
    void shouldGiveEveryBodyTheDocumentedLength() {
        assertEquals(8, HELLO_LENGTH);
        assertEquals(48, WELCOME_STORE_DEVICE_OFFSET);
        assertEquals(64, WELCOME_LENGTH);
        assertEquals(32, RELEASE_LENGTH);
        assertEquals(36, CREATE_METADATA_OFFSET);
        assertEquals(16, CREATED_LENGTH);
        assertEquals(20, ID_REQUEST_LENGTH);
        assertEquals(32, GET_LENGTH);
        assertEquals(24, GET_TIMEOUT_OFFSET);
        assertEquals(16, GET_MANY_IDS_OFFSET);
        assertEquals(8, COUNT_ENTRIES_OFFSET);
        assertEquals(88, STAT_FRAGMENTATION_OFFSET);
        assertEquals(112, STAT_CONNECTION_PINS_OFFSET);
        assertEquals(128, STAT_LENGTH);
        assertEquals(8, ERROR_MESSAGE_OFFSET);
    }
}
