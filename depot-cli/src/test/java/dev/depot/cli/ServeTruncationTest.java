package dev.depot.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.client.testing.ChildJvm;
import dev.depot.client.testing.TempStore;
import dev.depot.core.store.StoreFile;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.Test;

/** A store file truncated under a live daemon: the daemon notices, says so and exits non-zero. */
class ServeTruncationTest {
    @Test
    void shouldLogAndExitNonZeroWhenTheStoreFileIsTruncatedUnderIt() throws Exception {
        try (TempStore temp = new TempStore();
             ChildJvm daemon = ChildJvm.startMergingStderr(Main.class, "serve", "--dir", temp.dir().toString(),
                 "--capacity", "4m")) {
            daemon.awaitLine("depot: serving ", 60);
            CliRunner depot = new CliRunner(temp.dir());
            assertEquals(0, depot.runWithInput(new byte[100_000], "put").status());
            try (FileChannel ch = FileChannel.open(StoreFile.fileIn(temp.dir()), StandardOpenOption.WRITE)) {
                ch.truncate(8192);
            }
            String line = daemon.awaitLine("depot: the store file ", 30);
            assertTrue(line.contains("was truncated to 8192 bytes under the daemon"), line);
            assertTrue(line.contains("remove the store directory and start a new store"), line);
            assertEquals(1, daemon.waitFor(30), "a daemon without a usable store exits non-zero");
            CliRunner.Result stat = depot.run("stat");
            assertEquals(1, stat.status(), stat::toString);
            assertTrue(stat.stderr().contains("is truncated or resized"), stat::toString);
        }
    }
}
