package dev.depot.arrow;

import static org.junit.jupiter.api.Assertions.*;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectView;
import dev.depot.client.testing.ClientStores;
import dev.depot.client.testing.TempStore;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.Random;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.compression.CompressionUtil;
import org.apache.arrow.vector.compression.NoCompressionCodec;
import org.apache.arrow.vector.ipc.message.ArrowBodyCompression;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Objects that are not (complete, supported) Arrow streams are clear exceptions, never a crash or a leak. */
class BadStreamTest {
    /** Bounds what a corrupt length could make Arrow allocate (native memory, outside the heap's limit). */
    private static final long ALLOCATOR_LIMIT = 16 << 20;
    private TempStore temp;
    private DepotClient depot;
    private BufferAllocator allocator;
    private int next;

    @BeforeEach
    void setUp() {
        temp = new TempStore();
        depot = ClientStores.over(temp.create(64 << 20));
        allocator = new RootAllocator(ALLOCATOR_LIMIT);
    }

    @AfterEach
    void tearDown() {
        try {
            assertEquals(0, allocator.getAllocatedMemory(), "every failed open released its memory");
            assertTrue(depot.list().stream().allMatch(i -> i.pinCount() == 0), "and its pin");
            allocator.close();
            depot.close();
        } finally {
            temp.close();
        }
    }

    private ObjectId put(byte[] bytes) {
        ObjectId id = ObjectId.of("bad-" + next++);
        depot.put(id, bytes);
        return id;
    }

    private byte[] validStream() {
        ObjectId id = ObjectId.of("valid-" + next++);
        try (VectorSchemaRoot a = ArrowTestData.batch(allocator, 0, 5)) {
            DepotArrow.put(depot, id, a);
        }
        try (ObjectView v = depot.get(id, 0)) {
            return v.data().toArray(ValueLayout.JAVA_BYTE);
        } finally {
            depot.delete(id);
        }
    }

    /** Opens and reads every batch; returns normally only when the whole stream was accepted. */
    private void readAll(ObjectId id) {
        try (DepotArrowReader r = DepotArrow.open(depot, id, allocator)) {
            while (r.hasNext()) {
                try (VectorSchemaRoot root = r.next()) {
                    root.contentToTSVString();
                }
            }
        }
    }

    @Test
    void shouldSayAnObjectIsNotAnArrowStream() {
        var e = assertThrows(DepotArrow.BadStreamException.class,
            () -> readAll(put("hello, this is not arrow".getBytes(java.nio.charset.StandardCharsets.UTF_8))));
        assertTrue(e.getMessage().contains("is not an Arrow IPC stream"), e.getMessage());
        assertThrows(DepotArrow.BadStreamException.class, () -> readAll(put(new byte[0])));
        assertThrows(DepotArrow.BadStreamException.class, () -> readAll(put(new byte[] {-1, -1, -1, -1, 0, 0, 0, 0})));
    }

    @Test
    void shouldSayAStreamCutAnywhereIsTruncated() {
        byte[] stream = validStream();
        for (int cut = 0; cut < stream.length; cut++) {
            ObjectId id = put(java.util.Arrays.copyOf(stream, cut));
            var e = assertThrows(DepotArrow.BadStreamException.class, () -> readAll(id), "cut at " + cut);
            assertTrue(e.getMessage().contains("truncated") || e.getMessage().contains("not an Arrow"),
                "cut at " + cut + ": " + e.getMessage());
            depot.delete(id);
        }
    }

    @Test
    void shouldFailCleanlyOnCorruptBytesAnywhere() {
        byte[] stream = validStream();
        Random random = new Random(42);
        int accepted = 0;
        for (int at = 0; at < stream.length; at++) {
            for (byte value : new byte[] {(byte) 0xFF, (byte) 0x7F, (byte) random.nextInt()}) {
                byte[] bad = stream.clone();
                bad[at] = value;
                ObjectId id = put(bad);
                try {
                    readAll(id);
                    accepted++;
                } catch (DepotArrow.BadStreamException expected) {
                    assertNotNull(expected.getMessage());
                }
                depot.delete(id);
            }
        }
        assertTrue(accepted > 0, "corrupt data bytes still make a readable stream");
    }

    @Test
    void shouldRefuseCompressedStreams() {
        Schema schema = new Schema(List.of(Field.nullable("i", new ArrowType.Int(32, true))));
        ObjectId id = ObjectId.of("compressed");
        try (VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator)) {
            ((IntVector) root.getVector(0)).allocateNew(4);
            root.setRowCount(4);
            try (ArrowRecordBatch plain = new VectorUnloader(root, true, NoCompressionCodec.INSTANCE, true)
                     .getRecordBatch();
                 ArrowRecordBatch claimed = new ArrowRecordBatch(plain.getLength(), plain.getNodes(),
                     plain.getBuffers(), new ArrowBodyCompression(CompressionUtil.CodecType.LZ4_FRAME.getType(),
                     org.apache.arrow.flatbuf.BodyCompressionMethod.BUFFER))) {
                StreamWriter.write(depot, id, schema, List.of(claimed));
            }
        }
        var e = assertThrows(DepotArrow.UnsupportedStreamException.class, () -> readAll(id));
        assertTrue(e.getMessage().contains("compressed"), e.getMessage());
    }

    @Test
    void shouldRefuseDictionaryEncodedStreams() {
        Schema schema = new Schema(List.of(new Field("d", new FieldType(true, new ArrowType.Int(32, true),
            new DictionaryEncoding(7, false, null)), null)));
        ObjectId id = ObjectId.of("dictionary");
        StreamWriter.write(depot, id, schema, List.of());
        var e = assertThrows(DepotArrow.UnsupportedStreamException.class, () -> readAll(id));
        assertTrue(e.getMessage().contains("dictionary-encoded"), e.getMessage());
    }
}
