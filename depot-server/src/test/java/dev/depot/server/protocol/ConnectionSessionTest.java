package dev.depot.server.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.client.ObjectId;
import dev.depot.client.testing.TempStore;
import dev.depot.server.DepotServer;
import dev.depot.server.ServerConfig;
import dev.depot.client.testing.Eventually;
import org.junit.jupiter.api.Test;

/**
 * A connection that pins or creates through the daemon is a client of the store in its own right: its own slot and
 * its own pin table, opened at its first such request (not at HELLO: a Python client pins and creates in a slot of
 * its own, and most of its connections never need one).
 */
class ConnectionSessionTest {
    @Test
    void shouldGiveAConnectionItsOwnClientSlotAtItsFirstPinAndReturnItOnClose() throws Exception {
        try (TempStore temp = new TempStore();
             DepotServer server = DepotServer.start(ServerConfig.defaults().withDirectory(temp.dir())
                 .withCapacity(1 << 20), msg -> { })) {
            ObjectId id = ObjectId.random();
            server.client().put(id, new byte[100]);
            assertEquals(1, server.client().stats().clientCount());
            try (ProtocolTestClient a = ProtocolTestClient.open(temp.dir());
                 ProtocolTestClient b = ProtocolTestClient.open(temp.dir())) {
                assertEquals(1, server.client().stats().clientCount(), "HELLO alone takes no slot");
                assertTrue(a.get(id, 0).found());
                assertEquals(2, server.client().stats().clientCount());
                assertTrue(b.get(id, 0).found());
                assertEquals(3, server.client().stats().clientCount());
                assertEquals(2, server.client().list().getFirst().pinCount());
            }
            Eventually.await("the sessions' slots freed", () -> server.client().stats().clientCount() == 1);
            assertEquals(0, server.client().stats().pinnedBytes());
        }
    }
}
