package dev.depot.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class SizeTest {
    @Test
    void shouldParsePlainBytes() {
        assertEquals(0, Size.parse("0"));
        assertEquals(1048576, Size.parse("1048576"));
        assertEquals(12, Size.parse(" 12 "));
    }

    @Test
    void shouldParseBinaryUnitsInAnyCase() {
        assertEquals(64L << 10, Size.parse("64k"));
        assertEquals(512L << 20, Size.parse("512m"));
        assertEquals(4L << 30, Size.parse("4g"));
        assertEquals(4L << 30, Size.parse("4G"));
        assertEquals(2L << 40, Size.parse("2t"));
        assertEquals(512L << 20, Size.parse("512MB"));
        assertEquals(4L << 30, Size.parse("4GiB"));
        assertEquals(100, Size.parse("100b"));
    }

    @Test
    void shouldRoundFractionsDownToWholeBytes() {
        assertEquals(3L << 29, Size.parse("1.5g"));
        assertEquals(1, Size.parse("1.9"));
    }

    @Test
    void shouldRejectWhatIsNotASize() {
        for (String bad : new String[] {"", "g", "-1", "4x", "1.2.3", "abc", "4 g b", "0x10"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Size.parse(bad), bad);
            assertTrue(e.getMessage().contains("64k, 512m, 4g"), e.getMessage());
        }
    }

    @Test
    void shouldRejectSizesBeyondLong() {
        assertThrows(IllegalArgumentException.class, () -> Size.parse("9000000t"));
        assertEquals(Long.MAX_VALUE, Size.parse(Long.toString(Long.MAX_VALUE)));
    }

    @Test
    void shouldFormatWithBinaryUnits() {
        assertEquals("0 B", Size.format(0));
        assertEquals("1023 B", Size.format(1023));
        assertEquals("1.0 KiB", Size.format(1024));
        assertEquals("64.0 KiB", Size.format(64 << 10));
        assertEquals("1.5 GiB", Size.format(3L << 29));
        assertEquals("4.0 MiB", Size.format(4 << 20));
        assertEquals("8.0 EiB", Size.format(Long.MAX_VALUE));
    }
}
