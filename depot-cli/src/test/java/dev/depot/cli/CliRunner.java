package dev.depot.cli;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Runs {@link Main#run} in this JVM against one store directory, capturing stdout and stderr. */
final class CliRunner {
    /** What one run of the CLI did. */
    record Result(int status, byte[] stdoutBytes, String stderr) {
        String stdout() {
            return new String(stdoutBytes, StandardCharsets.UTF_8);
        }

        @Override
        public String toString() {
            return "exit " + status + ", stdout: " + stdout() + ", stderr: " + stderr;
        }
    }

    private final Path dir;

    CliRunner(Path dir) {
        this.dir = dir;
    }

    /** Runs {@code depot --dir DIR args...} with empty stdin. */
    Result run(String... args) {
        return runWithInput(new byte[0], args);
    }

    /** Runs {@code depot --dir DIR args...} with {@code stdin}. */
    Result runWithInput(byte[] stdin, String... args) {
        List<String> argv = new ArrayList<>(List.of("--dir", dir.toString()));
        argv.addAll(List.of(args));
        return runExactly(stdin, argv.toArray(String[]::new));
    }

    /** Runs {@code depot argv...} as given (no --dir added). */
    static Result runExactly(byte[] stdin, String... argv) {
        var out = new ByteArrayOutputStream();
        var err = new ByteArrayOutputStream();
        int status;
        try (var o = new PrintStream(out, true, StandardCharsets.UTF_8);
             var e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
            status = Main.run(argv, new ByteArrayInputStream(stdin), o, e);
        }
        return new Result(status, out.toByteArray(), err.toString(StandardCharsets.UTF_8));
    }
}
