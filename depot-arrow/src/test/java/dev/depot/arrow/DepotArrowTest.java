package dev.depot.arrow;

import static org.junit.jupiter.api.Assertions.*;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectView;
import dev.depot.client.testing.ClientStores;
import dev.depot.client.testing.TempStore;
import java.lang.foreign.MemorySegment;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class DepotArrowTest {
    private TempStore temp;
    private DepotClient depot;
    private BufferAllocator allocator;

    @BeforeEach
    void setUp() {
        temp = new TempStore();
        depot = ClientStores.over(temp.create(16 << 20));
        allocator = new RootAllocator();
    }

    @AfterEach
    void tearDown() {
        try {
            allocator.close();
            depot.close();
        } finally {
            temp.close();
        }
    }

    private ObjectId putTwoBatches(String name) {
        ObjectId id = ObjectId.of(name);
        try (VectorSchemaRoot a = ArrowTestData.batch(allocator, 0, 100);
             VectorSchemaRoot b = ArrowTestData.batch(allocator, 100, 37)) {
            DepotArrow.put(depot, id, a, b);
        }
        return id;
    }

    private int pins(ObjectId id) {
        return depot.list().stream().filter(i -> i.id().equals(id)).findFirst().orElseThrow().pinCount();
    }

    @Test
    void shouldReadBatchesWhoseBuffersAreTheObjectsSharedMemory() {
        ObjectId id = putTwoBatches("two");
        MemorySegment object;
        try (ObjectView v = depot.get(id, 0)) {
            object = v.data();
            assertEquals(0, object.address() % ArrowStreamDescriptor.BODY_ALIGNMENT);
            assertArrayEquals(ArrowStreamDescriptor.MEDIA_TYPE_BYTES, v.metadata());
        }
        try (DepotArrowReader reader = DepotArrow.open(depot, id, allocator)) {
            assertEquals(ArrowTestData.SCHEMA, reader.schema());
            assertEquals(2, reader.batchCount());
            assertEquals(object.byteSize(), allocator.getAllocatedMemory(), "the allocator is charged the object");
            try (VectorSchemaRoot first = reader.next(); VectorSchemaRoot second = reader.next()) {
                assertFalse(reader.hasNext());
                ArrowTestData.check(first, 0, 100);
                ArrowTestData.check(second, 100, 37);
                for (VectorSchemaRoot root : List.of(first, second)) {
                    for (FieldVector vector : root.getFieldVectors()) {
                        for (ArrowBuf buf : vector.getFieldBuffers()) {
                            assertTrue(buf.memoryAddress() >= object.address()
                                && buf.memoryAddress() + buf.capacity() <= object.address() + object.byteSize(),
                                vector.getName() + ": buffer at " + buf.memoryAddress() + " lies outside the object");
                        }
                        assertEquals(0, vector.getFieldBuffers().getFirst().memoryAddress() % 8);
                    }
                }
                assertEquals(object.byteSize(), allocator.getAllocatedMemory(), "nothing was copied");
            }
        }
        assertEquals(0, allocator.getAllocatedMemory());
        assertEquals(0, pins(id));
    }

    @Test
    void shouldOpenAndLoadABatchWithoutTouchingItsDataPages() {
        // 8 Mi one-byte values: 8 MiB of data and a 1 MiB validity bitmap, every bit set (no nulls).
        ObjectId id = ObjectId.of("untouched");
        int n = 8 << 20;
        try (VectorSchemaRoot root = VectorSchemaRoot.create(new org.apache.arrow.vector.types.pojo.Schema(List.of(
            org.apache.arrow.vector.types.pojo.Field.nullable("b", new org.apache.arrow.vector.types.pojo.ArrowType.Int(
                8, true)))), allocator)) {
            var b = (org.apache.arrow.vector.TinyIntVector) root.getVector(0);
            b.allocateNew(n);
            for (int i = 0; i < n; i++) {
                b.set(i, (byte) i);
            }
            root.setRowCount(n);
            DepotArrow.put(depot, id, root);
        }
        // A second client maps the store afresh: its mapping's resident size counts the pages touched through it.
        try (DepotClient reading = DepotClient.open(temp.dir());
             DepotArrowReader reader = DepotArrow.open(reading, id, allocator);
             VectorSchemaRoot batch = reader.next()) {
            FieldVector b = batch.getVector(0);
            assertEquals(n, b.getValueCount());
            assertEquals(n, batch.getRowCount());
            long resident = MappingResidency.residentBytes(reader.address());
            assertTrue(resident < 512 << 10, "open and load touched " + resident + " bytes of the mapping; the "
                + "bitmap alone is 1 MiB and the data 8 MiB");
            assertEquals((byte) 7, ((org.apache.arrow.vector.TinyIntVector) b).get(7));
            assertTrue(MappingResidency.residentBytes(reader.address()) > resident, "reading a value touches a page");
        }
    }

    @Test
    void shouldWriteAPlannedStreamIntoAnyMemoryAndReadItBackInPlace() {
        try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined();
             VectorSchemaRoot a = ArrowTestData.batch(allocator, 0, 100);
             VectorSchemaRoot b = ArrowTestData.batch(allocator, 100, 37)) {
            MemorySegment stream;
            try (ArrowStreamPlan plan = ArrowStreamPlan.of(a, b)) {
                stream = arena.allocate(plan.size(), ArrowStreamDescriptor.BODY_ALIGNMENT);
                plan.writeTo(stream);
            }
            long before = allocator.getAllocatedMemory();
            int[] released = {0};
            try (DepotArrowReader reader = DepotArrow.read(stream, "a test stream", allocator, () -> released[0]++);
                 VectorSchemaRoot first = reader.next(); VectorSchemaRoot second = reader.next()) {
                ArrowTestData.check(first, 0, 100);
                ArrowTestData.check(second, 100, 37);
                ArrowBuf data = first.getVector(0).getDataBuffer();
                assertTrue(data.memoryAddress() >= stream.address()
                    && data.memoryAddress() + data.capacity() <= stream.address() + stream.byteSize(), "in place");
                assertEquals(0, released[0]);
            }
            assertEquals(1, released[0], "released once, when the reader and its batches are closed");
            assertEquals(before, allocator.getAllocatedMemory());
            var e = assertThrows(DepotArrow.BadStreamException.class,
                () -> DepotArrow.read(stream.asSlice(0, 100), "a cut stream", allocator, () -> released[0]++));
            assertTrue(e.getMessage().startsWith("a cut stream"), e.getMessage());
            assertEquals(1, released[0]);
        }
    }

    @Test
    void shouldKeepObjectPinnedUntilItsLastBufferIsReleased() {
        ObjectId id = putTwoBatches("pinned");
        DepotArrowReader reader = DepotArrow.open(depot, id, allocator);
        VectorSchemaRoot batch = reader.batch(1);
        assertEquals(1, pins(id));
        reader.close();
        assertEquals(1, pins(id), "a batch outlives its reader");
        assertTrue(depot.delete(id));
        ArrowTestData.check(batch, 100, 37);
        batch.close();
        assertEquals(0, allocator.getAllocatedMemory());
        assertTrue(depot.list().stream().noneMatch(i -> i.id().equals(id)), "the deferred delete completed");
        assertThrows(IllegalStateException.class, () -> reader.batch(0));
    }

    @Test
    void shouldKeepMemoryMappedWhenTheClientClosesUnderLiveBuffers() {
        ObjectId id = putTwoBatches("client-closed");
        int clients = depot.stats().clientCount();
        VectorSchemaRoot batch;
        try (DepotClient other = DepotClient.open(temp.dir());
             DepotArrowReader reader = DepotArrow.open(other, id, allocator)) {
            batch = reader.batch(0);
        }
        assertEquals(1, pins(id));
        assertEquals(4950, ArrowTestData.check(batch, 0, 100), "the buffers still read the object");
        batch.close();
        assertEquals(0, pins(id));
        assertEquals(clients, depot.stats().clientCount(), "the last buffer finished closing the client");
    }

    @Test
    void shouldReleasePinWhenABatchFailsToOpen() {
        ObjectId id = ObjectId.of("tiny");
        depot.put(id, new byte[] {1, 2, 3});
        assertThrows(DepotArrow.BadStreamException.class, () -> DepotArrow.open(depot, id, allocator));
        assertEquals(0, pins(id));
        assertEquals(0, allocator.getAllocatedMemory());
    }

    @Test
    void shouldRefuseDictionaryEncodedFieldsOnPut() {
        var field = new org.apache.arrow.vector.types.pojo.Field("d", new org.apache.arrow.vector.types.pojo.FieldType(
            true, new org.apache.arrow.vector.types.pojo.ArrowType.Int(32, true),
            new org.apache.arrow.vector.types.pojo.DictionaryEncoding(1, false, null)), null);
        try (VectorSchemaRoot root = VectorSchemaRoot.create(
            new org.apache.arrow.vector.types.pojo.Schema(List.of(field)), allocator)) {
            root.allocateNew();
            root.setRowCount(0);
            var e = assertThrows(DepotArrow.UnsupportedStreamException.class,
                () -> DepotArrow.put(depot, ObjectId.of("dict"), root));
            assertTrue(e.getMessage().contains("dictionary-encoded"), e.getMessage());
        }
        assertFalse(depot.contains(ObjectId.of("dict")));
    }
}
