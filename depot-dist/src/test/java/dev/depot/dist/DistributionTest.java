package dev.depot.dist;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code depot-VERSION.tar.gz} unpacked into a temporary directory, far from the checkout and from Maven, run
 * with no JAVA_HOME (bin/depot finds a JDK 25 itself): the demo, and a daemon with a put/get round trip.
 */
class DistributionTest {
    @TempDir
    static Path unpacked;
    private static Path home;

    @BeforeAll
    static void unpack() throws Exception {
        Path archive = Path.of(System.getProperty("depot.dist.archive"));
        assertTrue(Files.isRegularFile(archive), "no archive " + archive + "; run mvn package first");
        Processes.Finished tar = Processes.run(unpacked, env -> { }, 60,
            List.of("tar", "-xzf", archive.toString(), "-C", unpacked.toString()));
        assertEquals(0, tar.status(), tar::toString);
        home = unpacked.resolve("depot-" + System.getProperty("depot.version"));
    }

    @Test
    void archiveShouldHoldTheLauncherJarsPythonClientAndDocsButNoBuild() throws Exception {
        assertTrue(Files.isExecutable(home.resolve("bin/depot")));
        assertTrue(Files.isRegularFile(home.resolve("bin/lib/jdk.sh")));
        for (String module : List.of("depot-core", "depot-client", "depot-server", "depot-shuffle", "depot-bench",
            "depot-cli")) {
            Path jar = home.resolve("lib/" + module + "-" + System.getProperty("depot.version") + ".jar");
            assertTrue(Files.isRegularFile(jar), "missing " + jar);
        }
        String spark = "spark/depot-spark-" + System.getProperty("depot.version") + ".jar";
        assertTrue(Files.isRegularFile(home.resolve(spark)), "missing " + spark);
        assertTrue(Files.isRegularFile(home.resolve("python/depot/__init__.py")));
        assertTrue(Files.isRegularFile(home.resolve("python/pyproject.toml")));
        assertFalse(Files.exists(home.resolve("python/tests")), "the Python tests are not shipped");
        assertTrue(Files.isRegularFile(home.resolve("docs/CLI.md")));
        assertTrue(Files.isRegularFile(home.resolve("README.md")));
        assertFalse(Files.exists(home.resolve("pom.xml")), "a pom.xml would make bin/depot build from sources");
        try (var jars = Files.list(home.resolve("lib"))) {
            assertFalse(jars.anyMatch(j -> j.getFileName().toString().startsWith("jmh-")), "JMH is not shipped");
        }
    }

    @Test
    void demoShouldRunFromTheUnpackedArchive() throws Exception {
        Processes.Finished demo = Processes.run(unpacked, Processes::withoutJavaHome, 300,
            List.of(home.resolve("bin/depot").toString(), "demo", "--quick"));
        assertEquals(0, demo.status(), demo::toString);
        assertTrue(demo.output().contains("TCP loopback"), demo::toString);
    }

    @Test
    void benchShouldFindTheBenchmarksInLib() throws Exception {
        Processes.Finished unknown = Processes.run(unpacked, Processes::withoutJavaHome, 120,
            List.of(home.resolve("bin/depot").toString(), "bench", "no-such-benchmark"));
        assertEquals(2, unknown.status(), unknown::toString);
        assertTrue(unknown.output().contains("depot bench: unknown benchmark 'no-such-benchmark'"), unknown::toString);
    }

    @Test
    void serveShouldRunFromTheUnpackedArchiveAndKeepWhatIsPut() throws Exception {
        Path store = Path.of("/dev/shm", "depot-test-" + UUID.randomUUID());
        String depot = home.resolve("bin/depot").toString();
        Path log = unpacked.resolve("serve.log");
        Process serve = Processes.start(unpacked, log, Processes::withoutJavaHome,
            List.of(depot, "serve", "--dir", store.toString(), "--capacity", "16m"));
        try {
            assertEquals("depot: serving " + store + " (capacity 16.0 MiB)",
                Processes.awaitLine(serve, log, "depot: serving ", 60));
            byte[] data = new byte[300_000];
            new Random(7).nextBytes(data);
            Path in = Files.write(unpacked.resolve("in.bin"), data);
            Path out = unpacked.resolve("out.bin");
            Processes.Finished put = Processes.run(unpacked, Processes::withoutJavaHome, 60,
                List.of(depot, "put", "--dir", store.toString(), "--name", "dist/round-trip", in.toString()));
            assertEquals(0, put.status(), put::toString);
            Processes.Finished get = Processes.run(unpacked, Processes::withoutJavaHome, 60,
                List.of(depot, "get", "--dir", store.toString(), "--name", "dist/round-trip", "-o", out.toString()));
            assertEquals(0, get.status(), get::toString);
            assertArrayEquals(data, Files.readAllBytes(out));

            serve.toHandle().destroy();
            assertTrue(serve.waitFor(60, TimeUnit.SECONDS), () -> "serve did not stop on SIGTERM: " + Processes.read(log));
            assertEquals(0, serve.exitValue(), () -> Processes.read(log));
        } finally {
            Processes.reap(serve);
            Processes.deleteTree(store);
        }
    }
}
