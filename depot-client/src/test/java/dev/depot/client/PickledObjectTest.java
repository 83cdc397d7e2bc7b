package dev.depot.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The layout by hand; python/tests/test_pickling_java.py reads objects Python wrote with the same class. */
class PickledObjectTest {
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** Header, one entry, a 5-byte "stream" at 48, one 16-byte buffer of the given kind at 64. */
    private static MemorySegment layout(long bufferOffset, long bufferLength, int kind) {
        MemorySegment data = MemorySegment.ofArray(new byte[128]);
        MemorySegment.copy(PickledObject.MAGIC, 0, data, ValueLayout.JAVA_BYTE, PickledObject.MAGIC_OFFSET, 4);
        data.set(U32, PickledObject.BUFFER_COUNT_OFFSET, 1);
        data.set(U64, PickledObject.STREAM_OFFSET_OFFSET, 48);
        data.set(U64, PickledObject.STREAM_LENGTH_OFFSET, 5);
        long entry = PickledObject.HEADER_LENGTH;
        data.set(U64, entry + PickledObject.ENTRY_OFFSET_OFFSET, bufferOffset);
        data.set(U64, entry + PickledObject.ENTRY_LENGTH_OFFSET, bufferLength);
        data.set(U32, entry + PickledObject.ENTRY_KIND_OFFSET, kind);
        for (int i = 0; i < 16; i++) {
            data.set(ValueLayout.JAVA_BYTE, 64 + i, (byte) i);
        }
        return data;
    }

    @Test
    void shouldGiveTheBuffersInPlace() {
        MemorySegment data = layout(64, 16, 1);
        PickledObject o = PickledObject.parse(data);
        assertEquals(5, o.stream().byteSize());
        assertEquals(1, o.bufferCount());
        assertEquals(PickledObject.Kind.BYTES, o.kind(0));
        assertEquals(16, o.buffer(0).byteSize());
        assertEquals(15, o.buffer(0).get(ValueLayout.JAVA_BYTE, 15));
        assertEquals(data.address() + 64, o.buffer(0).address());
    }

    @Test
    void shouldRejectABufferOutsideTheData() {
        assertThrows(IllegalArgumentException.class, () -> PickledObject.parse(layout(120, 16, 0)));
        assertThrows(IllegalArgumentException.class, () -> PickledObject.parse(layout(64, -1, 0)));
        assertThrows(IllegalArgumentException.class, () -> PickledObject.parse(layout(8, 16, 0)));
    }

    @Test
    void shouldRejectAnUnknownKind() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> PickledObject.parse(layout(64, 16, 7)));
        assertTrue(e.getMessage().contains("kind 7"), e.getMessage());
    }

    @Test
    void shouldRejectAWrongMagicOrATableLargerThanTheData() {
        MemorySegment data = layout(64, 16, 0);
        data.set(ValueLayout.JAVA_BYTE, 0, (byte) 'X');
        assertThrows(IllegalArgumentException.class, () -> PickledObject.parse(data));
        MemorySegment many = layout(64, 16, 0);
        many.set(U32, PickledObject.BUFFER_COUNT_OFFSET, 1000);
        assertThrows(IllegalArgumentException.class, () -> PickledObject.parse(many));
        assertThrows(IllegalArgumentException.class, () -> PickledObject.parse(MemorySegment.ofArray(new byte[10])));
    }

    @Test
    void shouldTellPickledMetadata() {
        assertTrue(PickledObject.isPickled("DPK1app".getBytes(StandardCharsets.US_ASCII)));
        assertFalse(PickledObject.isPickled("DPA1".getBytes(StandardCharsets.US_ASCII)));
        assertFalse(PickledObject.isPickled(new byte[2]));
    }
}
