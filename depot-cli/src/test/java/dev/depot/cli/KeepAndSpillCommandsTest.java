package dev.depot.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.client.testing.TempStore;
import dev.depot.server.DepotServer;
import dev.depot.server.ServerConfig;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@code put --keep} against a daemon that spills, and what {@code stat} and {@code ls} say about it. */
@Timeout(120)
class KeepAndSpillCommandsTest {
    private static final long CAPACITY = 4 << 20;

    private final TempStore temp = new TempStore();
    private DepotServer server;
    private CliRunner depot;

    @BeforeEach
    void startStore() {
        server = DepotServer.start(ServerConfig.defaults().withDirectory(temp.dir()).withCapacity(CAPACITY)
            .withControlSocket(false).withSpillDirectory(temp.dir().resolve("spill")), msg -> { });
        depot = new CliRunner(temp.dir());
    }

    @AfterEach
    void stopStore() {
        try {
            if (server != null) {
                server.close();
            }
        } finally {
            temp.close();
        }
    }

    @Test
    void shouldSpillKeptObjectsWhenFullAndShowThemInStatAndLs() {
        byte[] data = new byte[1 << 20];
        for (int i = 0; i < 8; i++) {
            data[0] = (byte) i;
            CliRunner.Result r = depot.runWithInput(data, "put", "--keep", "--name", "kept-" + i);
            assertEquals(0, r.status(), r::toString);
        }
        Map<String, Object> s = JsonText.parseObject(depot.run("stat", "--json").stdout());
        assertTrue((Long) s.get("spilled_objects") > 0, s::toString);
        assertEquals(temp.dir().resolve("spill").toAbsolutePath().toString(), s.get("spill_directory"));
        List<Map<String, Object>> ls = JsonText.parseArrayOfObjects(depot.run("ls", "--json").stdout());
        assertTrue(ls.stream().anyMatch(o -> "spilled".equals(o.get("state"))), ls::toString);
        CliRunner.Result got = depot.run("get", "--name", "kept-0");
        assertEquals(0, got.status(), got::toString);
        assertEquals(0, got.stdoutBytes()[0], "the spilled object came back whole");
        assertEquals(1 << 20, got.stdoutBytes().length);
    }

    @Test
    void shouldFailAGetOfADamagedSpilledObjectAtOnceWithTheDamageAndStatus3() throws Exception {
        byte[] data = new byte[1 << 20];
        for (int i = 0; i < 8; i++) {
            assertEquals(0, depot.runWithInput(data, "put", "--keep", "--name", "kept-" + i).status());
        }
        Map<String, Object> spilled = JsonText.parseArrayOfObjects(depot.run("ls", "--json").stdout()).stream()
            .filter(o -> "spilled".equals(o.get("state"))).findFirst().orElseThrow();
        String id = (String) spilled.get("id");
        Path file;
        try (Stream<Path> files = Files.list(temp.dir().resolve("spill"))) {
            file = files.filter(p -> p.getFileName().toString().startsWith(id) && p.toString().endsWith(".spill"))
                .findFirst().orElseThrow();
        }
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.seek(64 + 1000);
            f.write(1);  // the data was all zeros
        }
        // A timeout longer than the test's own: only a get told of the failure returns.
        CliRunner.Result got = depot.run("get", id, "--timeout", "600000");
        assertEquals(3, got.status(), got::toString);
        assertTrue(got.stderr().contains("spill file " + file.getFileName() + " is damaged: its CRC32C is"), got::toString);
        assertTrue(got.stderr().contains("the object is lost"), got::toString);
        assertEquals(0, got.stdoutBytes().length, "nothing of the damaged object was written");
    }

    @Test
    void shouldRefuseASpillLimitWithoutASpillDirectory() {
        CliRunner.Result r = depot.run("serve", "--spill-limit", "1g");
        assertEquals(2, r.status(), r::toString);
        assertTrue(r.stderr().contains("--spill-limit needs --spill-dir"), r::toString);
    }
}
