package dev.depot.spark;

import static org.junit.jupiter.api.Assertions.*;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.testing.TempStore;
import dev.depot.server.DepotServer;
import java.nio.file.Files;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** How the plugin attaches a JVM to its node's store (no Spark needed). */
class DepotNodeTest {
    @Test
    void shouldSpawnADaemonWhenNoneServesTheStoreAndAttachToIt() throws Exception {
        try (TempStore temp = new TempStore()) {
            ProcessHandle daemon = null;
            try {
                DepotClient client = DepotNode.attach(temp.dir(), 8 << 20, DepotNode.DaemonMode.SPAWN);
                int pid = DepotServer.liveDaemonPid(temp.dir());
                assertTrue(pid > 0 && pid != ProcessHandle.current().pid(), "a daemon process of its own serves it");
                daemon = ProcessHandle.of(pid).orElseThrow();
                assertEquals(ProcessHandle.current().pid(), daemon.parent().map(ProcessHandle::pid).orElse(-1L),
                    "this JVM started it");
                client.put(ObjectId.of("x"), new byte[] {1});
                assertSame(client, DepotNode.attach(temp.dir(), 8 << 20, DepotNode.DaemonMode.SPAWN),
                    "attaching again reuses the connection");
                DepotNode.detach(temp.dir());
                assertTrue(client.isClosed());
            } finally {
                if (daemon != null) {
                    daemon.destroy();
                    daemon.onExit().get(30, TimeUnit.SECONDS);
                }
                Files.deleteIfExists(temp.dir().resolveSibling(temp.dir().getFileName() + ".daemon.log"));
            }
        }
    }

    @Test
    void shouldRefuseToAttachWithoutADaemonWhenToldNotToStartOne() {
        try (TempStore temp = new TempStore()) {
            assertThrows(RuntimeException.class, () -> DepotNode.attach(temp.dir(), 8 << 20, DepotNode.DaemonMode.NONE));
        }
    }

    @Test
    void shouldParseSizes() {
        assertEquals(1L << 30, DepotNode.parseBytes("1g"));
        assertEquals(512L << 20, DepotNode.parseBytes("512M"));
        assertEquals(4096, DepotNode.parseBytes("4096"));
        assertThrows(IllegalArgumentException.class, () -> DepotNode.parseBytes("lots"));
    }
}
