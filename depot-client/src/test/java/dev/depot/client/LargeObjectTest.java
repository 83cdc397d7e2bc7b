package dev.depot.client;

import static org.junit.jupiter.api.Assertions.*;

import dev.depot.client.testing.ClientStores;
import dev.depot.client.testing.TempStore;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

/** Sizes are long everywhere: an object larger than 2 GiB is written and read in place. */
class LargeObjectTest {
    @Test
    void shouldStoreObjectLargerThanTwoGiB() {
        long size = (2L << 30) + (256L << 20);
        try (TempStore temp = new TempStore(); DepotClient depot = ClientStores.over(temp.create(size + (1 << 20)))) {
            ObjectId id = ObjectId.of("big");
            try (ObjectWriter w = depot.create(id, size)) {
                assertEquals(size, w.size());
                w.data().set(ValueLayout.JAVA_LONG, 0, 17);
                w.data().set(ValueLayout.JAVA_LONG, size - 8, 42);
                w.seal();
            }
            try (ObjectView v = depot.get(id, 0)) {
                assertEquals(size, v.size());
                assertEquals(17, v.data().get(ValueLayout.JAVA_LONG, 0));
                assertEquals(42, v.data().get(ValueLayout.JAVA_LONG, size - 8));
                var e = assertThrows(UnsupportedOperationException.class, v::asByteBuffer);
                assertTrue(e.getMessage().contains("MemorySegment"), e.getMessage());
            }
            assertEquals(size, depot.list().getFirst().dataSize());
        }
    }
}
