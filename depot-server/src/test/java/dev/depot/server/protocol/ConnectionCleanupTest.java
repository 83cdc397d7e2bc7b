package dev.depot.server.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectState;
import dev.depot.client.testing.ChildJvm;
import dev.depot.client.testing.TempStore;
import dev.depot.server.DepotServer;
import dev.depot.server.ServerConfig;
import dev.depot.client.testing.Eventually;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Whatever a connection held comes back when it ends: its pins are released and its unsealed objects aborted. */
class ConnectionCleanupTest {
    private static final ObjectId SHARED = ObjectId.of("shared");
    private static final ObjectId UNSEALED = ObjectId.of("unsealed");

    private TempStore temp;
    private DepotServer server;
    private DepotClient local;

    @BeforeEach
    void startDaemon() {
        temp = new TempStore();
        server = DepotServer.start(ServerConfig.defaults().withDirectory(temp.dir()).withCapacity(1L << 20), msg -> { });
        local = server.client();
        local.put(SHARED, new byte[4096]);
    }

    @AfterEach
    void stopDaemon() {
        try {
            server.close();
        } finally {
            temp.close();
        }
    }

    private boolean nothingHeld() {
        return local.stats().pinnedBytes() == 0 && local.list().stream().noneMatch(o -> o.state() == ObjectState.CREATING);
    }

    @Test
    void shouldReleasePinsAndAbortUnsealedObjectsWhenTheConnectionCloses() throws Exception {
        try (ProtocolTestClient c = ProtocolTestClient.open(temp.dir())) {
            c.get(SHARED, 0);
            c.get(SHARED, 0);
            c.create(UNSEALED, 1000, new byte[0], false);
            assertTrue(local.stats().pinnedBytes() > 0);
            assertEquals(ObjectState.CREATING, local.list().stream().filter(o -> o.id().equals(UNSEALED)).findAny()
                .orElseThrow().state());
        }
        Eventually.await("pins released and unsealed object aborted", this::nothingHeld);
        assertEquals(1, local.list().size());
        assertTrue(local.delete(SHARED), "the object is deletable at once: no pin is left");
    }

    @Test
    void shouldEndAWaitingGetWhenItsClientHangsUp() throws Exception {
        try (ProtocolTestClient c = ProtocolTestClient.open(temp.dir())) {
            c.send(c.frame(FrameDescriptor.TYPE_GET, 0, ProtocolTestClient.body(MessageDescriptor.GET_LENGTH)
                .put(MessageDescriptor.GET_ID_OFFSET, ObjectId.of("never").toBytes())
                .putLong(MessageDescriptor.GET_TIMEOUT_OFFSET, -1)));
        }
        local.put(ObjectId.of("never"), new byte[8]);
        Eventually.await("no pin left by the vanished waiter", this::nothingHeld);
    }

    @Test
    void shouldReleaseWhatAKilledClientHeld() throws Exception {
        try (ChildJvm child = ChildJvm.start(HoldingChild.class, temp.dir().toString())) {
            child.awaitLine("holding", 30);
            assertTrue(local.stats().pinnedBytes() > 0);
            child.kill();
        }
        Eventually.await("pins of the killed client released", this::nothingHeld);
    }

    @Test
    void shouldStopCleanlyWithConnectionsStillOpen() throws Exception {
        ProtocolTestClient c = ProtocolTestClient.open(temp.dir());
        try {
            c.get(SHARED, 0);
            c.create(UNSEALED, 10, new byte[0], false);
            server.close();
            assertTrue(c.isClosedByPeer());
        } finally {
            c.close();
        }
        server = DepotServer.start(ServerConfig.defaults().withDirectory(temp.dir()).withCapacity(1L << 20), msg -> { });
        local = server.client();
        Eventually.await("nothing held after a restart", this::nothingHeld);
    }

    /** A client that pins an object and creates another, prints "holding", and waits to be killed. */
    public static final class HoldingChild {
        private HoldingChild() {
        }

        public static void main(String[] args) throws Exception {
            ProtocolTestClient c = ProtocolTestClient.open(Path.of(args[0]));
            c.get(SHARED, 0);
            c.create(UNSEALED, 1000, new byte[0], false);
            System.out.println("holding");
            System.out.flush();
            Thread.sleep(60_000);
            c.close();
        }
    }
}
