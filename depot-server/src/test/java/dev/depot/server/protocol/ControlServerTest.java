package dev.depot.server.protocol;

import static dev.depot.server.protocol.MessageDescriptor.*;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectView;
import dev.depot.client.ObjectWriter;
import dev.depot.client.testing.ClientStores;
import dev.depot.client.testing.TempStore;
import dev.depot.core.store.StoreFile;
import dev.depot.errors.ErrorCode;
import dev.depot.server.DepotServer;
import dev.depot.server.ServerConfig;
import dev.depot.server.protocol.ProtocolTestClient.Location;
import dev.depot.server.protocol.ProtocolTestClient.RemoteError;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ControlServerTest {
    private static final long CAPACITY = 4L << 20;

    private TempStore temp;
    private DepotServer server;
    private DepotClient local;

    @BeforeEach
    void startDaemon() {
        temp = new TempStore();
        server = DepotServer.start(ServerConfig.defaults().withDirectory(temp.dir()).withCapacity(CAPACITY), msg -> { });
        local = server.client();
    }

    @AfterEach
    void stopDaemon() {
        try {
            if (server != null) {
                server.close();
            }
        } finally {
            temp.close();
        }
    }

    @Test
    void shouldServeASocketOnlyItsOwnerCanOpen() throws Exception {
        var socket = ControlServer.socketIn(temp.dir());
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(socket)));
    }

    @Test
    void shouldRemoveTheSocketOnClose() {
        server.close();
        assertFalse(Files.exists(ControlServer.socketIn(temp.dir())));
        server = null;
    }

    @Test
    void shouldReplaceAStaleSocketFileAtStart() throws Exception {
        server.close();
        Files.writeString(ControlServer.socketIn(temp.dir()), "stale");
        server = DepotServer.start(ServerConfig.defaults().withDirectory(temp.dir()).withCapacity(CAPACITY), msg -> { });
        try (ProtocolTestClient c = ProtocolTestClient.open(temp.dir())) {
            assertFalse(c.contains(ObjectId.of("x")));
        }
    }

    @Test
    void shouldAnswerHelloWithTheStoreFileAndItsLayout() throws Exception {
        try (ProtocolTestClient c = ProtocolTestClient.connect(temp.dir())) {
            var w = c.hello(FrameDescriptor.VERSION_MAJOR, FrameDescriptor.VERSION_MINOR + 7);
            assertEquals(FrameDescriptor.VERSION_MAJOR, w.major());
            assertEquals(FrameDescriptor.VERSION_MINOR, w.minor());
            assertEquals(ProcessHandle.current().pid(), w.daemonPid());
            Path file = StoreFile.fileIn(temp.dir());
            assertEquals(((Number) Files.getAttribute(file, "unix:dev")).longValue(), w.storeDevice());
            assertEquals(((Number) Files.getAttribute(file, "unix:ino")).longValue(), w.storeInode());
            assertEquals(Files.size(StoreFile.fileIn(temp.dir())), w.fileLength());
            assertEquals(ClientStores.storeOf(local).layout().heapOffset(), w.heapOffset());
            assertEquals(ClientStores.storeOf(local).layout().heapLength(), w.heapLength());
            assertEquals(FrameDescriptor.MAX_BODY_LENGTH, w.maxBody());
            assertEquals(64 * 1024, w.maxMetadata());
            assertEquals(GET_MANY_MAX_IDS, w.maxGetMany());
        }
    }

    @Test
    void shouldCreateObjectsWrittenThroughTheClientsOwnMapping() throws Exception {
        ObjectId id = ObjectId.of("written-remotely");
        try (ProtocolTestClient c = ProtocolTestClient.open(temp.dir())) {
            long offset = c.create(id, 100, new byte[] {1, 2, 3}, false);
            MemorySegment data = c.mapping().asSlice(offset, 100);
            for (int i = 0; i < 100; i++) {
                data.set(ValueLayout.JAVA_BYTE, i, (byte) i);
            }
            assertFalse(local.contains(id));
            c.seal(id);
        }
        try (ObjectView v = local.get(id, 0)) {
            assertEquals(100, v.size());
            assertEquals(42, v.data().get(ValueLayout.JAVA_BYTE, 42));
            assertArrayEquals(new byte[] {1, 2, 3}, v.metadata());
        }
    }

    @Test
    void shouldGetObjectsAtTheirFileOffsetsAndPinThemUntilRelease() throws Exception {
        ObjectId id = ObjectId.of("made-locally");
        try (ObjectWriter w = local.create(id, 64, new byte[] {9, 8})) {
            w.data().fill((byte) 5);
            w.seal();
        }
        try (ProtocolTestClient c = ProtocolTestClient.open(temp.dir())) {
            Location l = c.get(id, 0);
            assertTrue(l.found());
            assertEquals(64, l.dataSize());
            assertEquals(5, c.mapping().get(ValueLayout.JAVA_BYTE, l.dataOffset() + 63));
            assertEquals(2, l.metadataLength());
            assertEquals(8, c.mapping().get(ValueLayout.JAVA_BYTE, l.metadataOffset() + 1));
            assertEquals(1, c.stat().getLong(STAT_CONNECTION_PINS_OFFSET));
            assertTrue(local.stats().pinnedBytes() > 0);
            assertFalse(local.delete(id) && local.contains(id), "a pinned object is not freed by delete");
            c.release(id, l);
            assertEquals(0, c.stat().getLong(STAT_CONNECTION_PINS_OFFSET));
            assertEquals(0, local.stats().pinnedBytes());
            RemoteError e = assertThrows(RemoteError.class, () -> c.release(id, l));
            assertEquals(ErrorCode.OBJECT_MISSING, e.code);
        }
    }

    @Test
    void shouldReleaseExactlyThePinAHandleNamesAcrossGenerationsOfOneId() throws Exception {
        // X pinned in generation 1, deleted (deferred), created again; releasing the new view must not
        // end the old pin, or the old view's bytes are freed and reused under it.
        ObjectId id = ObjectId.of("reused-id");
        local.put(id, new byte[] {1, 1, 1, 1});
        try (ProtocolTestClient c = ProtocolTestClient.open(temp.dir())) {
            Location first = c.get(id, 0);
            assertTrue(local.delete(id));
            local.put(id, new byte[] {2, 2, 2, 2});
            Location second = c.get(id, 0);
            assertTrue(first.handle() != second.handle());
            c.release(id, second);
            for (int i = 0; i < 8; i++) {
                local.put(ObjectId.random(), new byte[] {9, 9, 9, 9});
            }
            assertEquals(1, c.mapping().get(ValueLayout.JAVA_BYTE, first.dataOffset()), "the old view's bytes changed");
            assertEquals(1, c.stat().getLong(STAT_CONNECTION_PINS_OFFSET));
            RemoteError e = assertThrows(RemoteError.class, () -> c.release(ObjectId.of("other"), first));
            assertEquals(ErrorCode.OBJECT_MISSING, e.code);
            c.release(id, first);
            assertEquals(0, local.stats().pinnedBytes());
        }
    }

    @Test
    void shouldPutASmallObjectInOneRequest() throws Exception {
        ObjectId id = ObjectId.of("put-inline");
        try (ProtocolTestClient c = ProtocolTestClient.open(temp.dir())) {
            long offset = c.put(id, new byte[] {4, 5, 6}, new byte[] {7});
            assertEquals(0, c.stat().getLong(STAT_CONNECTION_WRITERS_OFFSET), "sealed, not left open");
            assertEquals(6, c.mapping().get(ValueLayout.JAVA_BYTE, offset + 2));
            RemoteError e = assertThrows(RemoteError.class, () -> c.put(id, new byte[1], new byte[0]));
            assertEquals(ErrorCode.OBJECT_EXISTS, e.code);
        }
        try (ObjectView v = local.get(id, 0)) {
            assertArrayEquals(new byte[] {4, 5, 6}, v.data().toArray(ValueLayout.JAVA_BYTE));
            assertArrayEquals(new byte[] {7}, v.metadata());
        }
    }

    @Test
    void shouldReportAMissingObjectWithItsCode() throws Exception {
        try (ProtocolTestClient c = ProtocolTestClient.open(temp.dir())) {
            RemoteError e = assertThrows(RemoteError.class, () -> c.get(ObjectId.of("nowhere"), 0));
            assertEquals(ErrorCode.OBJECT_MISSING, e.code);
            e = assertThrows(RemoteError.class, () -> c.get(ObjectId.of("nowhere"), 30));
            assertEquals(ErrorCode.OBJECT_MISSING, e.code);
            assertTrue(e.getMessage().contains("not sealed within 30 ms"), e.getMessage());
        }
    }

    @Test
    void shouldWaitInGetUntilAnotherConnectionSeals() throws Exception {
        ObjectId id = ObjectId.of("later");
        try (ProtocolTestClient waiter = ProtocolTestClient.open(temp.dir());
             ProtocolTestClient maker = ProtocolTestClient.open(temp.dir())) {
            CompletableFuture<Location> got = CompletableFuture.supplyAsync(() -> {
                try {
                    return waiter.get(id, -1);
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            long offset = maker.create(id, 8, new byte[0], false);
            maker.mapping().set(ValueLayout.JAVA_LONG_UNALIGNED, offset, 77L);
            maker.seal(id);
            Location l = got.get();
            assertEquals(77L, waiter.mapping().get(ValueLayout.JAVA_LONG_UNALIGNED, l.dataOffset()));
        }
    }

    @Test
    void shouldEndAWaitingGetWhenTheClientSendsItsNextRequest() throws Exception {
        ObjectId id = ObjectId.of("given-up");
        try (ProtocolTestClient c = ProtocolTestClient.open(temp.dir())) {
            c.send(c.frame(FrameDescriptor.TYPE_GET, 0, ProtocolTestClient.body(GET_LENGTH)
                .put(GET_ID_OFFSET, id.toBytes()).putLong(GET_TIMEOUT_OFFSET, -1)));
            c.send(c.frame(FrameDescriptor.TYPE_CONTAINS, 0, ProtocolTestClient.body(ID_REQUEST_LENGTH)
                .put(ID_REQUEST_ID_OFFSET, id.toBytes())));
            RemoteError e = c.readError();
            assertEquals(ErrorCode.OBJECT_MISSING, e.code);
            assertTrue(e.getMessage().contains("before the client sent its next request"), e.getMessage());
            ProtocolTestClient.Reply contains = c.readReply();
            assertEquals(FrameDescriptor.replyType(FrameDescriptor.TYPE_CONTAINS), contains.type());
            assertEquals(0, contains.body().getInt(BOOLEAN_VALUE_OFFSET));
        }
    }

    @Test
    void shouldAbortAnUnsealedObject() throws Exception {
        ObjectId id = ObjectId.of("abandoned");
        try (ProtocolTestClient c = ProtocolTestClient.open(temp.dir())) {
            c.create(id, 1000, new byte[0], true);
            assertEquals(1, c.stat().getLong(STAT_CONNECTION_WRITERS_OFFSET));
            c.abort(id);
            assertEquals(0, c.stat().getLong(STAT_CONNECTION_WRITERS_OFFSET));
            assertTrue(local.list().isEmpty());
            assertEquals(ErrorCode.OBJECT_MISSING, assertThrows(RemoteError.class, () -> c.seal(id)).code);
        }
    }

    @Test
    void shouldRefuseToCreateAnExistingObject() throws Exception {
        ObjectId id = ObjectId.of("twice");
        local.put(id, new byte[4]);
        try (ProtocolTestClient c = ProtocolTestClient.open(temp.dir())) {
            assertEquals(ErrorCode.OBJECT_EXISTS, assertThrows(RemoteError.class, () -> c.create(id, 4, new byte[0], false)).code);
        }
    }

    @Test
    void shouldReportStoreFullWhenNotEvicting() throws Exception {
        try (ProtocolTestClient c = ProtocolTestClient.open(temp.dir())) {
            RemoteError e = assertThrows(RemoteError.class, () -> c.create(ObjectId.of("huge"), CAPACITY * 2, new byte[0], true));
            assertEquals(ErrorCode.STORE_FULL, e.code);
        }
    }

    @Test
    void shouldGetManyWithMissingEntriesMarkedNotFound() throws Exception {
        ObjectId a = ObjectId.of("a");
        ObjectId b = ObjectId.of("b");
        local.put(a, new byte[] {1});
        local.put(b, new byte[] {2, 2});
        try (ProtocolTestClient c = ProtocolTestClient.open(temp.dir())) {
            List<Location> got = c.getMany(List.of(a, ObjectId.of("missing"), b), 10);
            assertEquals(3, got.size());
            assertTrue(got.get(0).found());
            assertFalse(got.get(1).found());
            assertEquals(2, got.get(2).dataSize());
            assertEquals(2, c.stat().getLong(STAT_CONNECTION_PINS_OFFSET));
            c.release(a, got.get(0));
            c.release(b, got.get(2));
            assertEquals(0, local.stats().pinnedBytes());
        }
    }

    @Test
    void shouldAnswerContainsDeleteListStatAndEvict() throws Exception {
        ObjectId id = ObjectId.of("kept");
        local.put(id, new byte[1000]);
        try (ProtocolTestClient c = ProtocolTestClient.open(temp.dir())) {
            assertTrue(c.contains(id));
            var entries = c.list();
            assertEquals(1, entries.size());
            assertEquals(id, entries.get(0).id());
            assertEquals(1000, entries.get(0).dataSize());
            assertEquals(1, entries.get(0).state());
            ByteBuffer s = c.stat();
            assertEquals(local.stats().capacityBytes(), s.getLong(STAT_CAPACITY_OFFSET));
            assertEquals(1, s.getLong(STAT_OBJECTS_OFFSET));
            assertEquals(ProcessHandle.current().pid(), s.getLong(STAT_DAEMON_PID_OFFSET));
            assertTrue(c.evict(1) >= 1000);
            assertFalse(c.contains(id));
            local.put(id, new byte[10]);
            assertTrue(c.delete(id));
            assertFalse(c.delete(id));
            assertTrue(c.list().isEmpty());
        }
    }

    @Test
    void shouldListInSeveralFramesWhenOneIsNotEnough() throws Exception {
        server.close();
        temp.close();
        temp = new TempStore();
        server = DepotServer.start(ServerConfig.defaults().withDirectory(temp.dir()).withCapacity(8L << 20)
            .withIndexSlots(1 << 16), msg -> { });
        local = server.client();
        int n = LIST_ENTRIES_PER_FRAME + 10;
        for (int i = 0; i < n; i++) {
            local.put(ObjectId.of("o" + i), new byte[0]);
        }
        try (ProtocolTestClient c = ProtocolTestClient.open(temp.dir())) {
            assertEquals(n, c.list().size());
            assertTrue(c.contains(ObjectId.of("o0")), "the connection is in step after a long listing");
        }
    }
}
