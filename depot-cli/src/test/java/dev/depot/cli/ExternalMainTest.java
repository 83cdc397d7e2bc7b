package dev.depot.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.errors.DepotException;
import java.io.PrintStream;
import org.junit.jupiter.api.Test;

public class ExternalMainTest {
    /** A main class with only {@code main}, recording its arguments. */
    public static final class MainOnly {
        static volatile String[] received;

        public static void main(String[] args) {
            received = args;
        }
    }

    /** A main class with {@code run} too: it must be preferred, its status returned. */
    public static final class WithRun {
        public static void main(String[] args) {
            throw new AssertionError("run should have been called");
        }

        public static int run(String[] args, PrintStream out, PrintStream err) {
            out.print(String.join(",", args));
            return 7;
        }
    }

    /** A main class that fails. */
    public static final class Thrower {
        public static void main(String[] args) {
            throw new IllegalStateException("boom");
        }
    }

    @Test
    void shouldCallMainWithTheArgumentsUnchanged() throws Exception {
        String[] args = {"name", "--json", "--quick"};
        assertEquals(0, ExternalMain.run(MainOnly.class.getName(), "x", args, System.out, System.err));
        assertArrayEquals(args, MainOnly.received);
    }

    @Test
    void shouldPreferRunAndReturnItsStatus() throws Exception {
        var bytes = new java.io.ByteArrayOutputStream();
        try (var out = new PrintStream(bytes, true, java.nio.charset.StandardCharsets.UTF_8)) {
            assertEquals(7, ExternalMain.run(WithRun.class.getName(), "x", new String[] {"a", "b"}, out, System.err));
        }
        assertEquals("a,b", bytes.toString(java.nio.charset.StandardCharsets.UTF_8));
    }

    @Test
    void shouldSayHowToGetAMissingMainClass() {
        DepotException e = assertThrows(DepotException.class,
            () -> ExternalMain.run("dev.depot.bench.NoSuchMain", "benchmark", new String[0], System.out, System.err));
        assertTrue(e.getMessage().startsWith("the benchmark is not in this build"), e.getMessage());
        assertTrue(e.getMessage().contains("depot-bench"), e.getMessage());
    }

    @Test
    void shouldRethrowWhatTheMainClassThrows() {
        assertThrows(IllegalStateException.class, () -> ExternalMain.run(Thrower.class.getName(), "thrower",
            new String[0], System.out, System.err));
    }

    @Test
    void shouldSayHowToGetTheBenchmarksWhenDepotBenchIsAbsent() {
        // the CLI does not depend on depot-bench: its tests run without it
        for (String cmd : new String[] {"demo", "bench", "sort"}) {
            CliRunner.Result r = CliRunner.runExactly(new byte[0], cmd, "--quick");
            assertEquals(1, r.status(), r::toString);
            assertTrue(r.stderr().startsWith("depot: the "), r::toString);
            assertTrue(r.stderr().contains("is not in this build"), r::toString);
            assertTrue(r.stderr().contains("depot-bench"), r::toString);
        }
    }

    @Test
    void shouldRejectDirForDemoAndBench() {
        for (String cmd : new String[] {"demo", "bench"}) {
            CliRunner.Result r = CliRunner.runExactly(new byte[0], "--dir", "/tmp/x", cmd, "--quick");
            assertEquals(2, r.status(), r::toString);
            assertTrue(r.stderr().startsWith("depot: `depot " + cmd + "` uses a fresh store of its own"), r::toString);
        }
    }
}
