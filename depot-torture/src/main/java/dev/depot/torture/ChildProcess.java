package dev.depot.torture;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A child process (a JVM running one of this module's mains, or a Python worker); its stdout lines are queued.
 * Reaped by {@link #kill}.
 */
final class ChildProcess implements AutoCloseable {
    private final Process process;
    final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

    ChildProcess(Class<?> main, String... args) {
        this(javaCommand(main, args), java.util.Map.of());
    }

    /** Runs {@code command} with {@code env} added to this process's environment. */
    ChildProcess(List<String> command, java.util.Map<String, String> env) {
        try {
            ProcessBuilder pb = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT);
            pb.environment().putAll(env);
            process = pb.start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Thread.ofPlatform().daemon().start(() -> {
            try (var r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    lines.add(line);
                }
            } catch (IOException ignored) {
                // gone
            }
        });
    }

    private static List<String> javaCommand(Class<?> main, String... args) {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "--enable-native-access=ALL-UNNAMED", "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
            "-cp", System.getProperty("java.class.path"), main.getName()));
        cmd.addAll(List.of(args));
        return cmd;
    }

    long pid() {
        return process.pid();
    }

    /** Waits for the child to exit (at most {@code seconds}); its exit status, or -1 if it is still running. */
    int waitFor(long seconds) throws InterruptedException {
        return process.waitFor(seconds, TimeUnit.SECONDS) ? process.exitValue() : -1;
    }

    String await(String prefix, long seconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (true) {
            String line = lines.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (line == null) {
                throw new IllegalStateException("child " + process.pid() + " did not print '" + prefix + "' within "
                    + seconds + " s (alive: " + process.isAlive() + ")");
            }
            if (line.startsWith(prefix)) {
                return line;
            }
        }
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /** SIGKILL and reap. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    @Override
    public void close() throws InterruptedException {
        kill();
    }
}
