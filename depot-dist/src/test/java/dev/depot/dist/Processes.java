package dev.depot.dist;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Stream;

/** Child processes for the distribution tests: output to a file, a deadline, and always reaped. */
final class Processes {
    /** What a finished process did. */
    record Finished(int status, String output) {
        @Override
        public String toString() {
            return "exit " + status + ", output:\n" + output;
        }
    }

    private Processes() {
    }

    /** Starts {@code cmd} in {@code dir} with stdout and stderr going to {@code log}. */
    static Process start(Path dir, Path log, Consumer<Map<String, String>> env, List<String> cmd) throws IOException {
        ProcessBuilder b = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true)
            .redirectOutput(log.toFile());
        env.accept(b.environment());
        return b.start();
    }

    /** Runs {@code cmd} to completion within {@code seconds}. */
    static Finished run(Path dir, Consumer<Map<String, String>> env, long seconds, List<String> cmd)
        throws IOException, InterruptedException {
        Path log = Files.createTempFile(dir, "run-", ".log");
        Process p = start(dir, log, env, cmd);
        try {
            assertTrue(p.waitFor(seconds, TimeUnit.SECONDS), () -> cmd + " did not finish within " + seconds + " s: "
                + read(log));
            return new Finished(p.exitValue(), read(log));
        } finally {
            reap(p);
        }
    }

    /** Waits until {@code log} has a line starting with {@code prefix}; fails after {@code seconds}. */
    static String awaitLine(Process p, Path log, String prefix, long seconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (System.nanoTime() < deadline) {
            String line = read(log).lines().filter(l -> l.startsWith(prefix)).findFirst().orElse(null);
            if (line != null) {
                return line;
            }
            if (!p.isAlive()) {
                throw new AssertionError("exited with " + p.exitValue() + " before printing '" + prefix + "': "
                    + read(log));
            }
            Thread.sleep(50);
        }
        throw new AssertionError("no line starting with '" + prefix + "' within " + seconds + " s: " + read(log));
    }

    /** SIGKILL if still alive, then wait for it. */
    static void reap(Process p) throws InterruptedException {
        if (p.isAlive()) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
        p.waitFor(10, TimeUnit.SECONDS);
    }

    /** An environment where only a JDK found by bin/lib/jdk.sh can run Depot: no JAVA_HOME, a plain PATH. */
    static void withoutJavaHome(Map<String, String> env) {
        env.remove("JAVA_HOME");
        env.put("PATH", "/usr/bin:/bin");
    }

    static String read(Path log) {
        try {
            return Files.readString(log, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(cannot read " + log + ": " + e.getMessage() + ")";
        }
    }

    static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
