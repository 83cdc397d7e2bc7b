package dev.depot.server.protocol;

import static dev.depot.server.protocol.FrameDescriptor.*;
import static dev.depot.server.protocol.MessageDescriptor.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.client.ObjectId;
import dev.depot.client.testing.TempStore;
import dev.depot.errors.ErrorCode;
import dev.depot.server.DepotServer;
import dev.depot.server.ServerConfig;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Frames that break the protocol get an ERROR or a closed connection, and the daemon keeps serving others. */
class MalformedFrameTest {
    private TempStore temp;
    private DepotServer server;

    @BeforeEach
    void startDaemon() {
        temp = new TempStore();
        server = DepotServer.start(ServerConfig.defaults().withDirectory(temp.dir()).withCapacity(1L << 20), msg -> { });
    }

    @AfterEach
    void stopDaemon() {
        try {
            server.close();
        } finally {
            temp.close();
        }
    }

    /** A fresh, well-formed client is served normally. */
    private void assertStillServing() throws Exception {
        ObjectId id = ObjectId.random();
        try (ProtocolTestClient c = ProtocolTestClient.open(temp.dir())) {
            c.create(id, 16, new byte[0], false);
            c.seal(id);
            var pinned = c.get(id, 0);
            assertTrue(pinned.found());
            c.release(id, pinned);
            assertTrue(c.delete(id));
        }
        assertEquals(0, server.client().stats().pinnedBytes());
    }

    private static byte[] header(long length, int type, long requestId) {
        return ByteBuffer.allocate(HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN).putInt((int) length)
            .putShort((short) type).putShort((short) 0).putLong(requestId).array();
    }

    @Test
    void shouldCloseTheConnectionOnAnOversizedFrame() throws Exception {
        try (ProtocolTestClient c = ProtocolTestClient.open(temp.dir())) {
            c.sendRaw(header(MAX_LENGTH + 1L, TYPE_GET, 1));
            assertEquals(ErrorCode.BAD_REQUEST, c.readError().code);
            assertTrue(c.isClosedByPeer());
        }
        assertStillServing();
    }

    @Test
    void shouldCloseTheConnectionOnALengthOfFourGigabytes() throws Exception {
        try (ProtocolTestClient c = ProtocolTestClient.open(temp.dir())) {
            c.sendRaw(header(0xFFFF_FFFFL, TYPE_GET, 1));
            assertEquals(ErrorCode.BAD_REQUEST, c.readError().code);
            assertTrue(c.isClosedByPeer());
        }
        assertStillServing();
    }

    @Test
    void shouldCloseTheConnectionOnALengthTooShortForAHeader() throws Exception {
        try (ProtocolTestClient c = ProtocolTestClient.open(temp.dir())) {
            c.sendRaw(new byte[] {3, 0, 0, 0, 1, 0, 0});
            assertEquals(ErrorCode.BAD_REQUEST, c.readError().code);
            assertTrue(c.isClosedByPeer());
        }
        assertStillServing();
    }

    @Test
    void shouldSurviveAFrameCutShortByTheClient() throws Exception {
        try (ProtocolTestClient c = ProtocolTestClient.open(temp.dir())) {
            c.sendRaw(header(MIN_LENGTH + GET_LENGTH, TYPE_GET, 1));
            c.sendRaw(new byte[5]);
        }
        try (ProtocolTestClient c = ProtocolTestClient.connect(temp.dir())) {
            c.sendRaw(new byte[] {20, 0});
        }
        assertStillServing();
    }

    @Test
    void shouldAnswerAnUnknownTypeWithAnErrorAndKeepTheConnection() throws Exception {
        try (ProtocolTestClient c = ProtocolTestClient.open(temp.dir())) {
            c.send(c.frame(999, 0, ProtocolTestClient.body(3)));
            assertEquals(ErrorCode.BAD_REQUEST, c.readError().code);
            c.send(c.frame(TYPE_ERROR, 0, ProtocolTestClient.body(0)));
            assertEquals(ErrorCode.BAD_REQUEST, c.readError().code);
            assertFalse(c.contains(ObjectId.of("x")));
        }
        assertStillServing();
    }

    @Test
    void shouldAnswerWrongBodyLengthsWithAnErrorAndKeepTheConnection() throws Exception {
        try (ProtocolTestClient c = ProtocolTestClient.open(temp.dir())) {
            for (int type : new int[] {TYPE_SEAL, TYPE_ABORT, TYPE_GET, TYPE_RELEASE, TYPE_CONTAINS, TYPE_DELETE,
                TYPE_LIST, TYPE_STAT, TYPE_EVICT, TYPE_CREATE, TYPE_GET_MANY, TYPE_PUT}) {
                c.send(c.frame(type, 0, ProtocolTestClient.body(ID_LENGTH + 1)));
                assertEquals(ErrorCode.BAD_REQUEST, c.readError().code, FrameDescriptor.typeName(type));
            }
            assertFalse(c.contains(ObjectId.of("x")));
        }
        assertStillServing();
    }

    @Test
    void shouldRejectLengthFieldsInsideABodyThatDisagreeWithIt() throws Exception {
        try (ProtocolTestClient c = ProtocolTestClient.open(temp.dir())) {
            ByteBuffer create = ProtocolTestClient.body(CREATE_METADATA_OFFSET + 4);
            create.putLong(CREATE_SIZE_OFFSET, 8).putInt(CREATE_METADATA_LENGTH_OFFSET, 1000);
            c.send(c.frame(TYPE_CREATE, 0, create));
            assertEquals(ErrorCode.BAD_REQUEST, c.readError().code);

            create.putInt(CREATE_METADATA_LENGTH_OFFSET, -1);
            c.send(c.frame(TYPE_CREATE, 0, create));
            assertEquals(ErrorCode.BAD_REQUEST, c.readError().code);

            create.putInt(CREATE_METADATA_LENGTH_OFFSET, 4).putLong(CREATE_SIZE_OFFSET, -8);
            c.send(c.frame(TYPE_CREATE, 0, create));
            assertEquals(ErrorCode.BAD_REQUEST, c.readError().code);

            ByteBuffer many = ProtocolTestClient.body(GET_MANY_IDS_OFFSET + ID_LENGTH);
            many.putInt(GET_MANY_COUNT_OFFSET, Integer.MAX_VALUE);
            c.send(c.frame(TYPE_GET_MANY, 0, many));
            assertEquals(ErrorCode.BAD_REQUEST, c.readError().code);

            ByteBuffer evict = ProtocolTestClient.body(EVICT_LENGTH).putLong(EVICT_BYTES_OFFSET, -1);
            c.send(c.frame(TYPE_EVICT, 0, evict));
            assertEquals(ErrorCode.BAD_REQUEST, c.readError().code);

            c.send(c.frame(TYPE_STAT, 1, ProtocolTestClient.body(0)));
            assertEquals(ErrorCode.BAD_REQUEST, c.readError().code);
            assertEquals(0, c.stat().getLong(STAT_CONNECTION_WRITERS_OFFSET));
        }
        assertStillServing();
    }

    @Test
    void shouldRequireHelloFirst() throws Exception {
        try (ProtocolTestClient c = ProtocolTestClient.connect(temp.dir())) {
            c.send(c.frame(TYPE_STAT, 0, ProtocolTestClient.body(0)));
            assertEquals(ErrorCode.BAD_REQUEST, c.readError().code);
            assertTrue(c.isClosedByPeer());
        }
        assertStillServing();
    }

    @Test
    void shouldRefuseAnotherMajorVersion() throws Exception {
        try (ProtocolTestClient c = ProtocolTestClient.connect(temp.dir())) {
            ByteBuffer hello = ProtocolTestClient.body(HELLO_LENGTH).putShort(HELLO_MAJOR_OFFSET, (short) (VERSION_MAJOR + 1));
            c.send(c.frame(TYPE_HELLO, 0, hello));
            ProtocolTestClient.RemoteError e = c.readError();
            assertEquals(ErrorCode.VERSION_MISMATCH, e.code);
            assertTrue(e.getMessage().contains("speaks protocol " + (VERSION_MAJOR + 1)), e.getMessage());
            assertTrue(c.isClosedByPeer());
        }
        assertStillServing();
    }

    @Test
    void shouldRefuseASecondHello() throws Exception {
        try (ProtocolTestClient c = ProtocolTestClient.open(temp.dir())) {
            ByteBuffer hello = ProtocolTestClient.body(HELLO_LENGTH).putShort(HELLO_MAJOR_OFFSET, (short) VERSION_MAJOR);
            c.send(c.frame(TYPE_HELLO, 0, hello));
            assertEquals(ErrorCode.BAD_REQUEST, c.readError().code);
        }
        assertStillServing();
    }

    @Test
    void shouldSurviveRandomFrames() throws Exception {
        Random random = new Random(42);
        for (int round = 0; round < 40; round++) {
            try (ProtocolTestClient c = ProtocolTestClient.open(temp.dir())) {
                int sent = 0;
                while (sent < 20 && sendRandom(c, random)) {
                    sent++;
                }
            }
        }
        assertStillServing();
    }

    /** Sends random bytes or a frame with a random body; false once the daemon has hung up. */
    private static boolean sendRandom(ProtocolTestClient c, Random random) {
        byte[] body = new byte[random.nextInt(80)];
        random.nextBytes(body);
        try {
            if (random.nextInt(4) == 0) {
                c.sendRaw(body);
                return true;
            }
            int type = 1 + random.nextInt(14);
            ByteBuffer b = ProtocolTestClient.body(body.length).put(0, body);
            if (type == TYPE_GET && body.length == GET_LENGTH) {
                b.putLong(GET_TIMEOUT_OFFSET, 0);
            }
            if (type == TYPE_GET_MANY && body.length >= GET_MANY_IDS_OFFSET) {
                b.putLong(GET_MANY_TIMEOUT_OFFSET, 0);
            }
            c.send(c.frame(type, 0, b));
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
