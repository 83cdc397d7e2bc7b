package dev.depot.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectView;
import dev.depot.client.testing.ChildJvm;
import dev.depot.client.testing.LockHolder;
import dev.depot.client.testing.TempStore;
import dev.depot.server.DepotServer;
import dev.depot.server.ServerConfig;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A process stopped (SIGSTOP) while it holds the allocator lock does not freeze the store: reads and closing a
 * reader's client never take the lock, and what needs it gives up after the wait limit naming the holder.
 */
class StoppedLockHolderTest {
    private static void signal(String sig, long pid) throws Exception {
        Process p = new ProcessBuilder("kill", "-" + sig, Long.toString(pid)).inheritIO().start();
        assertTrue(p.waitFor(10, TimeUnit.SECONDS));
    }

    @Test
    void shouldKeepReadsWorkingAndNameTheHolderWhenAStoppedProcessHoldsTheLock() throws Exception {
        try (TempStore temp = new TempStore();
             DepotServer server = DepotServer.start(ServerConfig.defaults().withDirectory(temp.dir())
                 .withCapacity(1 << 20).withControlSocket(false), msg -> { })) {
            ObjectId id = ObjectId.of("kept");
            server.client().put(id, new byte[] {1, 2, 3});
            CliRunner depot = new CliRunner(temp.dir());
            try (ChildJvm holder = ChildJvm.start(LockHolder.class, temp.dir().toString())) {
                holder.awaitLine("locked", 30);
                signal("STOP", holder.pid());
                try {
                    CliRunner.Result get = depot.run("get", "--name", "kept");
                    assertEquals(0, get.status(), get::toString);
                    assertArrayEquals(new byte[] {1, 2, 3}, get.stdoutBytes());
                    CliRunner.Result ls = depot.run("ls", "--json");
                    assertEquals(0, ls.status(), ls::toString);
                    CliRunner.Result stat = depot.run("stat", "--json");
                    assertEquals(0, stat.status(), stat::toString);
                    Map<String, Object> s = JsonText.parseObject(stat.stdout());
                    assertEquals(-1L, s.get("largest_free_block"), "unknown while the lock is held");
                    CliRunner.Result human = depot.run("stat");
                    assertTrue(human.stdout().contains("largest block unknown: the allocator lock is held"), human::toString);
                    try (DepotClient reader = DepotClient.open(temp.dir()); ObjectView v = reader.get(id, 0)) {
                        assertEquals(3, v.size());
                        assertEquals(1, reader.list().size());
                    }

                    CliRunner.Result put = depot.runWithInput(new byte[10], "put");
                    assertEquals(1, put.status(), put::toString);
                    assertTrue(put.stderr().startsWith("depot: allocator lock held by pid " + holder.pid() + " (client "),
                        put::toString);
                    assertTrue(put.stderr().contains("; is it stopped?"), put::toString);
                } finally {
                    signal("CONT", holder.pid());
                    holder.kill();
                }
            }
            // The holder is dead now: the next change steals the lock, rebuilds and goes on.
            CliRunner.Result put = depot.runWithInput(new byte[10], "put");
            assertEquals(0, put.status(), put::toString);
        }
    }
}
