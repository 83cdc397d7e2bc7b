package dev.depot.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.errors.DepotException;
import org.junit.jupiter.api.Test;

public class ExternalMainTest {
    /** A main class that records its arguments. */
    public static final class Recorder {
        static volatile String[] received;

        public static void main(String[] args) {
            received = args;
        }
    }

    @Test
    void shouldPassArgumentsUnchanged() throws Exception {
        String[] args = {"--dir", "/x", "name", "--json"};
        ExternalMain.run(Recorder.class.getName(), "recorder", args);
        assertArrayEquals(args, Recorder.received);
    }

    @Test
    void shouldSayHowToGetAMissingMainClass() {
        DepotException e = assertThrows(DepotException.class,
            () -> ExternalMain.run("dev.depot.bench.NoSuchMain", "benchmark", new String[0]));
        assertTrue(e.getMessage().startsWith("the benchmark is not in this build"), e.getMessage());
        assertTrue(e.getMessage().contains("depot-bench"), e.getMessage());
    }

    @Test
    void shouldRethrowWhatTheMainClassThrows() {
        assertThrows(IllegalStateException.class, () -> ExternalMain.run(Thrower.class.getName(), "thrower",
            new String[0]));
    }

    /** A main class that fails. */
    public static final class Thrower {
        public static void main(String[] args) {
            throw new IllegalStateException("boom");
        }
    }
}
