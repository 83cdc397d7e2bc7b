package dev.depot.server.multiprocess;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectInfo;
import dev.depot.client.ObjectState;
import dev.depot.client.ObjectView;
import dev.depot.client.ObjectWriter;
import dev.depot.client.testing.Eventually;
import dev.depot.client.testing.TempStore;
import dev.depot.errors.ObjectLostException;
import dev.depot.errors.ObjectMissingException;
import dev.depot.errors.StoreFullException;
import dev.depot.server.DepotServer;
import dev.depot.server.ServerConfig;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Spilled objects that cannot be restored: a damaged, truncated, swapped or missing spill file is detected (by its
 * header and CRC32C) and the get fails at once naming the object, the file and the damage; the object is dropped,
 * never served. A store with no room for a restore fails the get with the reason.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SpillFailureTest {
    private static final long CAPACITY = 8L << 20;
    private static final long SIZE = 1L << 20;
    private static final int COUNT = 12;

    private TempStore temp;
    private Path spillDir;
    private DepotServer server;
    private DepotClient depot;

    @BeforeEach
    void setUp() {
        temp = new TempStore();
        spillDir = temp.dir().resolve("spill");
        server = DepotServer.start(ServerConfig.defaults().withDirectory(temp.dir()).withCapacity(CAPACITY)
            .withControlSocket(false).withSpillDirectory(spillDir), msg -> { });
        depot = DepotClient.open(temp.dir());
    }

    @AfterEach
    void tearDown() {
        try {
            depot.close();
            server.close();
        } finally {
            temp.close();
        }
    }

    private static String name(int i) {
        return "f-" + i;
    }

    private void putKeep(String name) {
        try (ObjectWriter w = depot.create(Payloads.id(name, SIZE), SIZE, new byte[] {7}, DepotClient.CreateOption.KEEP)) {
            Payloads.fill(w.data(), name);
            w.seal();
        }
    }

    /** Puts COUNT KEEP objects into a store that holds fewer; returns the ids of two spilled ones with whole files. */
    private List<ObjectId> spilled() throws Exception {
        for (int i = 0; i < COUNT; i++) {
            putKeep(name(i));
        }
        List<ObjectId> out = new ArrayList<>();
        Eventually.await("two spilled objects with their files", () -> {
            out.clear();
            for (ObjectInfo o : depot.list()) {
                if (o.state() == ObjectState.SPILLED && spillFile(o.id()) != null && out.size() < 2) {
                    out.add(o.id());
                }
            }
            return out.size() == 2;
        });
        return out;
    }

    private Path spillFile(ObjectId id) throws IOException {
        try (Stream<Path> s = Files.list(spillDir)) {
            return s.filter(p -> p.getFileName().toString().startsWith(id.toHex())
                && p.getFileName().toString().endsWith(".spill")).findFirst().orElse(null);
        }
    }

    private static void flipByte(Path file, long at) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.seek(at);
            int b = f.read();
            f.seek(at);
            f.write(b ^ 0x01);
        }
    }

    /**
     * A get fails with the damage (without word of it, it would end at its timeout with ObjectMissingException);
     * afterwards the object is simply missing.
     */
    private void assertLost(ObjectId id, Path file, String damage) {
        var e = assertThrows(ObjectLostException.class, () -> depot.get(id, 30_000).close());
        String m = e.getMessage();
        assertTrue(m.startsWith("object " + id + " could not be restored from the spill directory "), m);
        assertTrue(m.contains("spill file " + file.getFileName() + " is damaged: "), m);
        assertTrue(m.contains(damage), m);
        assertTrue(m.contains("put it again"), m);
        assertThrows(ObjectMissingException.class, () -> depot.get(id, 0).close(), "dropped, not served later");
        assertTrue(depot.stats().spillFailureCount() >= 1, "counted: " + depot.stats());
    }

    private void assertOthersIntact(List<ObjectId> lost) {
        for (int i = 0; i < COUNT; i++) {
            ObjectId id = Payloads.id(name(i), SIZE);
            if (!lost.contains(id)) {
                try (ObjectView v = depot.get(id, 60_000)) {
                    assertNull(Payloads.verify(v.data(), name(i)));
                }
            }
        }
    }

    @Test
    void shouldReportAFlippedDataByteAsALostObjectNeverServeIt() throws Exception {
        ObjectId id = spilled().get(0);
        Path file = spillFile(id);
        flipByte(file, 64 + SIZE / 2);
        assertLost(id, file, "its CRC32C is 0x");
        assertOthersIntact(List.of(id));
    }

    @Test
    void shouldReportAFlippedMetadataByteAsALostObject() throws Exception {
        ObjectId id = spilled().get(0);
        Path file = spillFile(id);
        flipByte(file, 64 + SIZE);
        assertLost(id, file, "its CRC32C is 0x");
    }

    @Test
    void shouldNameTheWrongObjectInASwappedFile() throws Exception {
        List<ObjectId> two = spilled();
        Path file = spillFile(two.get(0));
        Files.copy(spillFile(two.get(1)), file, StandardCopyOption.REPLACE_EXISTING);
        assertLost(two.get(0), file, "it holds object " + two.get(1).toHex() + ", not this one");
        try (ObjectView v = depot.get(two.get(1), 60_000)) {
            assertEquals(SIZE, v.data().byteSize(), "the object whose file was copied is intact");
        }
    }

    @Test
    void shouldReportATruncatedFile() throws Exception {
        ObjectId id = spilled().get(0);
        Path file = spillFile(id);
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.setLength(64 + SIZE / 2);
        }
        assertLost(id, file, "(truncated)");
    }

    @Test
    void shouldReportAMissingFile() throws Exception {
        ObjectId id = spilled().get(0);
        Path file = spillFile(id);
        Files.delete(file);
        assertLost(id, file, "it is missing");
    }

    @Test
    void shouldReportAFileOfAnAbsurdLength() throws Exception {
        ObjectId id = spilled().get(0);
        Path file = spillFile(id);
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.seek(16);
            f.write(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, 0, 0});
        }
        assertLost(id, file, "its header says 281474976710655 bytes of data");
    }

    @Test
    void shouldFailAGetWithTheReasonWhenTheStoreHasNoRoomToRestore() throws Exception {
        ObjectId id = spilled().get(0);
        List<ObjectView> pins = new ArrayList<>();
        try {
            // Pin every resident object, and fill what is left with pinned ones: nothing can be evicted or spilled.
            for (ObjectInfo o : depot.list()) {
                if (o.state() == ObjectState.SEALED) {
                    pins.add(depot.get(o.id(), 0));
                }
            }
            for (int i = 0; ; i++) {
                ObjectId filler = ObjectId.of("filler-" + i);
                try {
                    depot.put(filler, new byte[(int) (SIZE / 2)]);
                } catch (StoreFullException full) {
                    break;
                }
                pins.add(depot.get(filler, 0));
            }
            var e = assertThrows(StoreFullException.class, () -> depot.get(id, 500).close());
            assertTrue(e.getMessage().startsWith("object " + id + " could not be restored from the spill directory "),
                e.getMessage());
            assertTrue(e.getMessage().contains("the store has no room for its "), e.getMessage());
            assertThrows(StoreFullException.class, () -> depot.get(id, 0).close(), "timeout 0 learns it at once");
        } finally {
            pins.forEach(ObjectView::close);
        }
        try (ObjectView v = depot.get(id, 60_000)) {
            assertEquals(SIZE, v.data().byteSize(), "restored once there is room");
        }
    }
}
