package dev.depot.dist;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The wheel {@code depot_shm-*.whl} installed into a bare virtual environment in a temporary directory, far
 * from the checkout, with no DEPOT_HOME, JAVA_HOME or PYTHONPATH: {@code depot.connect(start=True)} starts a
 * daemon from the jars inside the wheel, an array goes in and comes back, and the venv's {@code depot} command
 * answers {@code --version} and {@code stat}.
 */
class WheelTest {
    private static final String VERSION = System.getProperty("depot.version");

    @TempDir
    static Path work;
    private static Path venv;

    @BeforeAll
    static void install() throws Exception {
        Path wheel;
        try (Stream<Path> s = Files.list(Path.of(System.getProperty("depot.dist.target")))) {
            List<Path> wheels = s.filter(p -> p.getFileName().toString().matches("depot_shm-.*\\.whl"))
                .toList();
            assertEquals(1, wheels.size(), () -> "expected one depot_shm wheel in target/, found " + wheels
                + "; run mvn package first");
            wheel = wheels.get(0);
        }
        venv = work.resolve("venv");
        String python = System.getProperty("depot.python", "python3");
        Processes.Finished made = Processes.run(work, WheelTest::outsideTheCheckout, 120,
            List.of(python, "-m", "venv", venv.toString()));
        assertEquals(0, made.status(), made::toString);
        Processes.Finished pip = Processes.run(work, WheelTest::outsideTheCheckout, 300,
            List.of(venv.resolve("bin/python").toString(), "-m", "pip", "install", "--retries", "0",
                "--disable-pip-version-check", wheel + "[numpy]"));
        assertEquals(0, pip.status(), pip::toString);
    }

    /** No Depot, JDK or Python path from the environment: the wheel has to bring what it needs. */
    private static void outsideTheCheckout(Map<String, String> env) {
        for (String name : List.of("DEPOT_HOME", "DEPOT_DIR", "JAVA_HOME", "PYTHONPATH", "DEPOT_JAVA_OPTS",
            "VIRTUAL_ENV")) {
            env.remove(name);
        }
        env.put("PATH", (venv == null ? "" : venv.resolve("bin") + ":") + "/usr/bin:/bin");
    }

    @Test
    void wheelShouldCarryTheDaemonJarsInsideThePackage() throws Exception {
        Path jars;
        try (Stream<Path> s = Files.list(venv.resolve("lib"))) {
            jars = s.findFirst().orElseThrow().resolve("site-packages/depot/_jars");
        }
        for (String module : List.of("depot-core", "depot-client", "depot-server", "depot-cli")) {
            Path jar = jars.resolve(module + "-" + VERSION + ".jar");
            assertTrue(Files.isRegularFile(jar), "no " + jar);
        }
        try (Stream<Path> s = Files.list(jars)) {
            assertFalse(s.anyMatch(j -> j.getFileName().toString().startsWith("jmh-")), "JMH is not shipped");
        }
    }

    @Test
    void depotCommandShouldPrintTheVersionOfTheBundledCli() throws Exception {
        Processes.Finished version = Processes.run(work, WheelTest::outsideTheCheckout, 120,
            List.of(venv.resolve("bin/depot").toString(), "--version"));
        assertEquals(0, version.status(), version::toString);
        assertEquals("depot " + VERSION, version.output().strip(), version::toString);
    }

    @Test
    void connectWithStartShouldRunTheBundledDaemonAndKeepAnArrayThatDepotStatCounts() throws Exception {
        Path store = Path.of("/dev/shm", "depot-test-" + UUID.randomUUID());
        Path script = Files.writeString(work.resolve("round_trip.py"), """
            import subprocess, sys
            import numpy as np
            import depot, depot.daemon

            store, venv = sys.argv[1], sys.argv[2]
            assert depot.__file__.startswith(venv), depot.__file__
            launcher = depot.daemon.find_launcher()
            assert launcher[-2:] == [depot.daemon.BUNDLED_JARS + "/*", "dev.depot.cli.Main"], launcher
            with depot.connect(store, start=True, capacity="64m") as client:
                print("daemon pid", client.daemon_pid, flush=True)
                oid = depot.ObjectId.of("wheel/round-trip")
                client.put_array(oid, np.arange(1000, dtype=np.float64))
                arr = client.get_array(oid, timeout=5.0)
                assert arr.sum() == 499500.0, arr.sum()
                del arr
                stat = subprocess.run(["depot", "stat", "--dir", store], capture_output=True, text=True, timeout=120)
                print(stat.stdout + stat.stderr)
                assert stat.returncode == 0, stat.returncode
            print("round trip ok")
            """);
        long daemon = 0;
        try {
            Processes.Finished run = Processes.run(work, WheelTest::outsideTheCheckout, 300,
                List.of(venv.resolve("bin/python").toString(), script.toString(), store.toString(), venv.toString()));
            daemon = run.output().lines().filter(l -> l.startsWith("daemon pid ")).mapToLong(l -> Long.parseLong(
                l.substring("daemon pid ".length()).strip())).findFirst().orElse(0);
            assertEquals(0, run.status(), run::toString);
            assertTrue(daemon > 0, run::toString);
            assertTrue(ProcessHandle.of(daemon).isEmpty(), "the daemon outlived the process that started it");
            assertFalse(Files.exists(store), "the store the daemon created was not removed when it stopped");
            assertTrue(run.output().contains("objects     1 (1 sealed"), run::toString);
            assertTrue(run.output().contains("round trip ok"), run::toString);
        } finally {
            if (daemon > 0) {
                ProcessHandle.of(daemon).ifPresent(ProcessHandle::destroyForcibly);
            }
            Processes.deleteTree(store);
        }
    }
}
