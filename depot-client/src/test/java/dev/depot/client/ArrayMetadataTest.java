package dev.depot.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

class ArrayMetadataTest {
    @Test
    void shouldRoundTripDtypeAndShape() {
        ArrayMetadata m = ArrayMetadata.of("<f8", 3, 4);
        ArrayMetadata back = ArrayMetadata.decode(m.encode());
        assertEquals(m, back);
        assertEquals(96, back.byteSize());
        assertEquals(ByteOrder.LITTLE_ENDIAN, back.byteOrder());
        assertArrayEquals(new long[] {3, 4}, back.shape());
    }

    @Test
    void shouldEncodeTheDocumentedBytes() {
        // "DPA1", 3, "<i4", ndim 1, shape 5 (u64 LE): the same bytes the Python client writes.
        assertEquals("44504131" + "03" + "3c6934" + "01" + "0500000000000000",
            HexFormat.of().formatHex(ArrayMetadata.of("<i4", 5).encode()));
    }

    @Test
    void shouldKeepApplicationBytesAfterTheHeader() {
        ArrayMetadata m = ArrayMetadata.of("|u1");
        byte[] all = m.encode(new byte[] {9, 8});
        assertEquals(m, ArrayMetadata.decode(all));
        assertArrayEquals(new byte[] {9, 8}, Arrays.copyOfRange(all, m.headerLength(), all.length));
        assertEquals(1, m.elementCount());
    }

    @Test
    void shouldRejectTruncatedOrForeignMetadata() {
        byte[] full = ArrayMetadata.of("<f4", 2, 2).encode();
        for (int n = 0; n < full.length; n++) {
            byte[] cut = Arrays.copyOf(full, n);
            assertThrows(IllegalArgumentException.class, () -> ArrayMetadata.decode(cut), "length " + n);
        }
        assertFalse(ArrayMetadata.isArray(new byte[] {'x', 'y', 'z', 'w'}));
        assertTrue(ArrayMetadata.isArray(full));
    }

    @Test
    void shouldRejectBadDtypesAndShapes() {
        assertThrows(IllegalArgumentException.class, () -> ArrayMetadata.of("f8", 1));
        assertThrows(IllegalArgumentException.class, () -> ArrayMetadata.of("<f", 1));
        assertThrows(IllegalArgumentException.class, () -> ArrayMetadata.of("<f8", -1));
        assertThrows(IllegalArgumentException.class, () -> ArrayMetadata.of("<f8", Long.MAX_VALUE, 2));
    }
}
