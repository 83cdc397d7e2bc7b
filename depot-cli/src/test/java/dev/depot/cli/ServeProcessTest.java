package dev.depot.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.client.testing.ChildJvm;
import dev.depot.client.testing.TempStore;
import dev.depot.server.DepotServer;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code depot serve} as a real child process: ready line, clients served, clean exit on SIGTERM. */
class ServeProcessTest {
    @Test
    void shouldServeUntilSigtermAndExitZero() throws InterruptedException {
        try (TempStore temp = new TempStore();
             ChildJvm daemon = ChildJvm.start(Main.class, "serve", "--dir", temp.dir().toString(),
                 "--capacity", "4m", "--max-objects", "100")) {
            String ready = daemon.awaitLine("depot: ", 60);
            assertEquals("depot: serving " + temp.dir() + " (capacity 4.0 MiB)", ready);

            CliRunner depot = new CliRunner(temp.dir());
            CliRunner.Result put = depot.runWithInput("data".getBytes(StandardCharsets.UTF_8), "put", "--name", "x");
            assertEquals(0, put.status(), put::toString);
            Map<String, Object> stats = JsonText.parseObject(depot.run("stat", "--json").stdout());
            assertEquals(daemon.pid(), stats.get("daemon_pid"));
            assertEquals(4L << 20, stats.get("capacity_bytes"));
            // 100 objects need 134 slots: the next power of two is 256, of which 3/4 are usable
            assertEquals(192L, stats.get("max_objects"));

            CliRunner.Result second = depot.run("serve");
            assertEquals(1, second.status(), second::toString);
            assertTrue(second.stderr().contains("already serves"), second::toString);

            assertTrue(ProcessHandle.of(daemon.pid()).orElseThrow().destroy(), "SIGTERM not sent");
            assertEquals(0, daemon.waitFor(60));
            assertEquals(0, DepotServer.liveDaemonPid(temp.dir()));
            assertEquals("data", depot.run("get", "--name", "x").stdout(), "objects outlive the daemon");
        }
    }
}
