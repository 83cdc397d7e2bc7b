package dev.depot.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
 * alive.
 */
class BenchSmokeTest {
    private static final ObjectMapper JSON = new ObjectMapper();
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

    @ParameterizedTest
    @MethodSource("benchmarks")
    void shouldPrintOneJsonObjectPerCaseWithTheExpectedKeys(String name) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int status = BenchMain.run(new String[] {name, "--quick", "--json"}, print(out), System.err);
        assertEquals(0, status, "exit status of depot bench " + name);
        List<String> lines = out.toString(StandardCharsets.UTF_8).lines().filter(l -> !l.isBlank()).toList();
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
        }
    }

    @Test
    void shouldRejectAnUnknownBenchmarkWithUsageStatus() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        assertEquals(2, BenchMain.run(new String[] {"no-such-bench"}, print(new ByteArrayOutputStream()), print(err)));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("unknown benchmark 'no-such-bench'"));
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
