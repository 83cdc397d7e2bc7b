package dev.depot.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Runs every benchmark with {@code --quick --json} in this JVM and checks the shape of what it prints (never the
 * timings), and runs the demo; afterwards no benchmark store of this JVM may be left in /dev/shm and no child JVM
 * alive. A benchmark whose Python driver's interpreter lacks a module the driver imports is skipped, naming the
 * interpreter, the module and how to provide it: the interpreters are optional, the drivers' code is not.
 */
class BenchSmokeTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** The benchmarks with a Python driver: the interpreter each runs (as it chooses it) and what it imports. */
    private static final Map<String, PythonDriver> PYTHON_DRIVERS = Map.of(
        "python-get", new PythonDriver(null, "python3", List.of("numpy"), "python3 -m pip install numpy"),
        "python-ops", new PythonDriver("DEPOT_BENCH_PYTHON", "python3", List.of(), ""),
        "dask", new PythonDriver("DEPOT_BENCH_PYTHON", "python3", List.of("dask", "numpy"),
            "python3 -m pip install dask numpy"),
        "dask-distributed", new PythonDriver("DEPOT_DISTRIBUTED_PYTHON", "/usr/bin/python3",
            List.of("distributed", "dask", "numpy", "pandas", "psutil"),
            "apt-get install python3-distributed python3-numpy python3-pandas python3-psutil"));
    /**
     * An interpreter with current distributed (2023.1 or later, with pyarrow: its P2P shuffle), for the run of
     * dask-distributed that compares P2P with Depot's shuffle; bin/test sets it to its third environment.
     */
    static final String CURRENT_DISTRIBUTED_VARIABLE = "DEPOT_CURRENT_DISTRIBUTED_PYTHON";
    private static final Set<String> KEYS = Set.of("name", "case", "figures", "baseline", "ratio", "target", "met");
    private Set<Path> storesBefore;

    /** All but {@code spark}: it runs Spark applications for minutes and needs depot-spark, built after this module. */
    static List<String> benchmarks() {
        return BenchMain.names().stream().filter(n -> !n.equals("spark")).toList();
    }

    /** Tags this JVM's benchmark stores, so the check below sees only ours, not other runs' on a shared machine. */
    @BeforeAll
    static void tagStores() {
        System.setProperty(BenchStore.TAG_PROPERTY, "smoke-" + ProcessHandle.current().pid() + "-");
    }

    @BeforeEach
    void rememberStores() throws IOException {
        storesBefore = benchStores();
    }

    @AfterEach
    void shouldLeaveNoStoreAndNoChild() throws IOException {
        Set<Path> left = benchStores();
        left.removeAll(storesBefore);
        left.forEach(BenchStore::deleteTree);
        assertEquals(Set.of(), left, "benchmark stores left in /dev/shm");
        List<ProcessHandle> children = ProcessHandle.current().children().filter(ProcessHandle::isAlive).toList();
        children.forEach(ProcessHandle::destroyForcibly);
        assertEquals(List.of(), children, "child processes left running");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("benchmarks")
    void shouldPrintOneJsonObjectPerCaseWithTheExpectedKeys(String name) throws IOException, InterruptedException {
        PythonDriver driver = PYTHON_DRIVERS.get(name);
        if (driver != null) {
            String lacking = driver.lacking();
            if (!lacking.isEmpty()) {
                System.err.println("BenchSmokeTest: depot bench " + name + " skipped: " + lacking);
            }
            assumeTrue(lacking.isEmpty(), () -> "depot bench " + name + " skipped: " + lacking);
        }
        assertJsonCases(name, runQuick(name));
    }

    @Test
    void daskDistributedShouldMeasureP2pBesideDepotsShuffleOnCurrentDistributed()
            throws IOException, InterruptedException {
        String python = System.getenv(CURRENT_DISTRIBUTED_VARIABLE);
        String why = python == null ? CURRENT_DISTRIBUTED_VARIABLE + " is not set (an interpreter with current"
            + " distributed and pyarrow; bin/test sets it)" : new PythonDriver(CURRENT_DISTRIBUTED_VARIABLE, python,
                List.of("distributed", "dask", "numpy", "pandas", "pyarrow", "psutil"),
                "pip install -r python/tests/requirements-distributed.txt").lacking();
        if (!why.isEmpty()) {
            System.err.println("BenchSmokeTest: depot bench dask-distributed on current distributed skipped: " + why);
        }
        assumeTrue(why.isEmpty(), () -> "depot bench dask-distributed on current distributed skipped: " + why);
        List<Map<?, ?>> cases = assertJsonCases("dask-distributed", runQuick("dask-distributed", "--python", python));
        List<String> names = cases.stream().map(c -> String.valueOf(c.get("case"))).toList();
        assertTrue(names.stream().anyMatch(n -> n.endsWith(": P2P on depot://")), names.toString());
        assertTrue(names.stream().anyMatch(n -> n.endsWith(": Depot's shuffle")), names.toString());
        for (Map<?, ?> c : cases) {
            if (String.valueOf(c.get("case")).startsWith("shuffle ")) {
                Map<?, ?> baseline = assertInstanceOf(Map.class, c.get("baseline"));
                assertTrue(String.valueOf(baseline.get("kind")).startsWith("P2P over TCP"), c.toString());
                Map<?, ?> figures = assertInstanceOf(Map.class, c.get("figures"));
                assertInstanceOf(Number.class, figures.get("peak_over_bound"), c.toString());
            }
        }
    }

    /** What {@code depot bench NAME --quick --json ARGS} printed; fails on a non-zero exit status. */
    private static String runQuick(String name, String... args) {
        List<String> all = new ArrayList<>(List.of(name, "--quick", "--json"));
        all.addAll(List.of(args));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int status = BenchMain.run(all.toArray(String[]::new), print(out), System.err);
        assertEquals(0, status, "exit status of depot bench " + String.join(" ", all));
        return out.toString(StandardCharsets.UTF_8);
    }

    /** Checks that {@code output} is one JSON object per case, each with {@link #KEYS}; returns them. */
    private static List<Map<?, ?>> assertJsonCases(String name, String output) throws IOException {
        List<Map<?, ?>> cases = new ArrayList<>();
        List<String> lines = output.lines().filter(l -> !l.isBlank()).toList();
        assertFalse(lines.isEmpty(), "no output from " + name);
        for (String line : lines) {
            Map<?, ?> m = assertInstanceOf(Map.class, JSON.readValue(line, Object.class), line);
            assertEquals(KEYS, m.keySet().stream().map(Object::toString).collect(Collectors.toSet()), line);
            assertEquals(name, m.get("name"));
            assertFalse(assertInstanceOf(Map.class, m.get("figures"), line).isEmpty(), line);
            assertFalse(assertInstanceOf(Map.class, m.get("baseline"), line).isEmpty(), line);
            assertInstanceOf(Number.class, m.get("ratio"), line);
            assertInstanceOf(String.class, m.get("target"), line);
            assertInstanceOf(Boolean.class, m.get("met"), line);
            cases.add(m);
        }
        return cases;
    }

    @Test
    void shouldRejectAnUnknownBenchmarkWithUsageStatus() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        assertEquals(2, BenchMain.run(new String[] {"no-such-bench"}, print(new ByteArrayOutputStream()), print(err)));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("unknown benchmark 'no-such-bench'"));
    }

    @Test
    void shouldRejectPythonWithoutAnInterpreterWithUsageStatus() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        assertEquals(2, BenchMain.run(new String[] {"dask-distributed", "--python"}, print(new ByteArrayOutputStream()),
            print(err)));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("--python needs the path of an interpreter"));
    }

    @Test
    void demoShouldRunToCompletionAndRemoveItsStore() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int status = DemoMain.run(new String[] {"--quick"}, print(out), print(new ByteArrayOutputStream()));
        String text = out.toString(StandardCharsets.UTF_8);
        assertEquals(0, status, text);
        String storeLine = text.lines().filter(l -> l.startsWith("store: ")).findFirst().orElseThrow();
        Path dir = Path.of(storeLine.substring("store: ".length()).split(" ")[0]);
        assertTrue(dir.getFileName().toString().startsWith(BenchStore.PREFIX), storeLine);
        assertFalse(Files.exists(dir), "the demo left its store " + dir);
        assertTrue(text.contains("TCP loopback"), text);
    }

    /**
     * A benchmark's Python interpreter: {@code $variable} if set (a null variable: always {@code fallback}), else
     * {@code fallback}; {@code modules} are what its driver imports besides {@code depot}, {@code hint} how to get
     * them.
     */
    private record PythonDriver(String variable, String fallback, List<String> modules, String hint) {
        private static final String PROBE = "import importlib.util, sys\n"
            + "print(' '.join(m for m in sys.argv[1:] if importlib.util.find_spec(m) is None))";

        /** What the interpreter lacks, said for a person ("" when it has everything). */
        String lacking() throws IOException, InterruptedException {
            String env = variable == null ? null : System.getenv(variable);
            String interpreter = env != null ? env : fallback;
            String how = (variable == null ? "" : "set " + variable + " to an interpreter that has it"
                + (hint.isEmpty() ? "" : ", or ")) + hint;
            List<String> cmd = new ArrayList<>(List.of(interpreter, "-c", PROBE));
            cmd.addAll(modules);
            Process p;
            try {
                p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            } catch (IOException e) {
                return "its interpreter " + interpreter + " cannot be run (" + e.getMessage() + "); " + how;
            }
            try {
                String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
                if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                    return "its interpreter " + interpreter + " failed to start: " + out + "; " + how;
                }
                return out.isEmpty() ? ""
                    : "its interpreter " + interpreter + " has no module " + out.replace(" ", ", ") + "; " + how;
            } finally {
                p.destroyForcibly();
                p.waitFor();
            }
        }
    }

    private static PrintStream print(ByteArrayOutputStream b) {
        return new PrintStream(b, true, StandardCharsets.UTF_8);
    }

    private static Set<Path> benchStores() throws IOException {
        try (Stream<Path> s = Files.list(Path.of("/dev/shm"))) {
            return s.filter(p -> p.getFileName().toString().startsWith(BenchStore.prefix()))
                .collect(Collectors.toSet());
        }
    }
}
