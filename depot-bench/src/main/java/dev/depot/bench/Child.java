package dev.depot.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A child JVM running {@link ChildMain} with one role: same java binary and class path as this JVM, native access
 * enabled. The driver talks to it in lines: {@link #send} writes to its stdin, {@link #awaitLine} reads its
 * stdout; its stderr is ours. {@link #close} kills it (SIGKILL) if it still runs and reaps it, always.
 */
final class Child implements AutoCloseable {
    /** Extra JVM options for every child, e.g. {@code -XX:StartFlightRecording} to profile them. */
    static final String EXTRA_OPTIONS_ENV = "DEPOT_BENCH_CHILD_OPTS";

    private final String role;
    private final Process process;
    private final Writer stdin;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

    private Child(String role, Process process) {
        this.role = role;
        this.process = process;
        this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        Thread.ofPlatform().daemon().name("child-" + process.pid() + "-stdout").start(() -> {
            try (var r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    lines.add(line);
                }
            } catch (IOException ignored) {
                // the child is gone; awaitLine reports it
            }
        });
    }

    /** Starts {@code role} with a heap of at most {@code heapMiB} MiB. */
    static Child start(String role, int heapMiB, String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("--enable-native-access=ALL-UNNAMED");
        cmd.add("-Xms16m");
        cmd.add("-Xmx" + heapMiB + "m");
        cmd.add("-XX:+UseSerialGC");
        String extra = System.getenv(EXTRA_OPTIONS_ENV);
        if (extra != null && !extra.isBlank()) {
            cmd.addAll(List.of(extra.trim().split("\\s+")));
        }
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(ChildMain.class.getName());
        cmd.add(role);
        cmd.addAll(List.of(args));
        try {
            return new Child(role, new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start a child JVM for " + role + ": " + e.getMessage(), e);
        }
    }

    long pid() {
        return process.pid();
    }

    void send(String line) {
        try {
            stdin.write(line);
            stdin.write('\n');
            stdin.flush();
        } catch (IOException e) {
            throw new UncheckedIOException("child " + role + " (pid " + pid() + ") no longer reads its input"
                + " (alive: " + process.isAlive() + ")", e);
        }
    }

    /** The next stdout line starting with {@code prefix} (earlier lines are skipped); fails after the time. */
    String awaitLine(String prefix, long seconds) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        try {
            while (true) {
                long left = deadline - System.nanoTime();
                String line = left > 0 ? lines.poll(Math.min(left, 100_000_000L), TimeUnit.NANOSECONDS) : null;
                if (line != null && line.startsWith(prefix)) {
                    return line;
                }
                if (line == null && (left <= 0 || (!process.isAlive() && lines.isEmpty() && drained()))) {
                    throw new IllegalStateException("child " + role + " (pid " + pid() + ") printed no line starting"
                        + " with '" + prefix + "' within " + seconds + " s (alive: " + process.isAlive()
                        + (process.isAlive() ? "" : ", exit status " + process.exitValue()) + ")");
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for child " + role, e);
        }
    }

    /** The next stdout line, whatever it is; fails after the time or when the child died. */
    String nextLine(long seconds) {
        return awaitLine("", seconds);
    }

    private boolean drained() throws InterruptedException {
        Thread.sleep(50);
        return lines.isEmpty();
    }

    /** Waits for a normal exit; fails (the caller's close then kills it) when it does not come in time. */
    void awaitExit(long seconds) {
        try {
            if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
                throw new IllegalStateException("child " + role + " (pid " + pid() + ") did not exit within "
                    + seconds + " s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for child " + role, e);
        }
        if (process.exitValue() != 0) {
            throw new IllegalStateException("child " + role + " (pid " + pid() + ") exited with status "
                + process.exitValue());
        }
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroyForcibly();
        }
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                System.err.println("depot-bench: child " + role + " (pid " + pid() + ") survived SIGKILL for 10 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            stdin.close();
        } catch (IOException ignored) {
            // the pipe is gone with the child
        }
    }

    /** Closes every child, even when closing one fails. */
    static void closeAll(List<Child> children) {
        for (Child c : children) {
            c.close();
        }
    }
}
