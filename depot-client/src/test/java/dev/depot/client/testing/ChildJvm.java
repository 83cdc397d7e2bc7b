package dev.depot.client.testing;

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
 * A child JVM running {@code mainClass} with this JVM's class path. Its stdout lines are queued for
 * {@link #awaitLine}; stderr goes to ours. Always reaped: {@link #close} kills it (SIGKILL) if still running.
 */
public final class ChildJvm implements AutoCloseable {
    private final Process process;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

    private ChildJvm(Process process) {
        this.process = process;
        Thread.ofPlatform().daemon().start(() -> {
            try (var r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    lines.add(line);
                }
            } catch (IOException ignored) {
                // the child is gone
            }
        });
    }

    public static ChildJvm start(Class<?> mainClass, String... args) {
        return startWith(List.of(), mainClass, args);
    }

    /** As {@link #start}, with the child's stderr merged into the stdout lines that {@link #awaitLine} reads. */
    public static ChildJvm startMergingStderr(Class<?> mainClass, String... args) {
        return start(List.of(), true, mainClass, args);
    }

    /** As {@link #start} with extra JVM options (for example {@code -Xint} to stress under the interpreter). */
    public static ChildJvm startWith(List<String> jvmOptions, Class<?> mainClass, String... args) {
        return start(jvmOptions, false, mainClass, args);
    }

    /** As {@link #startWith}, with {@code environment} added to the child's environment. */
    public static ChildJvm startWith(java.util.Map<String, String> environment, List<String> jvmOptions,
                                     Class<?> mainClass, String... args) {
        return start(environment, jvmOptions, false, mainClass, args);
    }

    /**
     * Runs the single-file program {@code source} as a user runs it ({@code java -cp ... Source.java}: the JDK's
     * source launcher compiles it), with this JVM's class path, {@code environment} added, stderr merged into the
     * lines {@link #awaitLine} reads.
     */
    public static ChildJvm startSource(java.util.Map<String, String> environment, Path source, String... args) {
        return start(environment, List.of(), true, source.toString(), args);
    }

    private static ChildJvm start(List<String> jvmOptions, boolean mergeStderr, Class<?> mainClass, String... args) {
        return start(java.util.Map.of(), jvmOptions, mergeStderr, mainClass, args);
    }

    private static ChildJvm start(java.util.Map<String, String> environment, List<String> jvmOptions,
                                  boolean mergeStderr, Class<?> mainClass, String... args) {
        return start(environment, jvmOptions, mergeStderr, mainClass.getName(), args);
    }

    /** {@code main}: a class name, or a source file for the source launcher. */
    private static ChildJvm start(java.util.Map<String, String> environment, List<String> jvmOptions,
                                  boolean mergeStderr, String main, String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("--enable-native-access=ALL-UNNAMED");
        cmd.add("-Xmx256m");
        cmd.add("-XX:+UseSerialGC");
        cmd.addAll(jvmOptions);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(main);
        cmd.addAll(List.of(args));
        try {
            ProcessBuilder pb = new ProcessBuilder(cmd);
            pb.environment().putAll(environment);
            if (mergeStderr) {
                pb.redirectErrorStream(true);
            } else {
                pb.redirectError(ProcessBuilder.Redirect.INHERIT);
            }
            return new ChildJvm(pb.start());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public long pid() {
        return process.pid();
    }

    /** Waits for the next stdout line that starts with {@code prefix}; fails after {@code seconds}. */
    public String awaitLine(String prefix, long seconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (true) {
            long left = deadline - System.nanoTime();
            String line = left > 0 ? lines.poll(left, TimeUnit.NANOSECONDS) : null;
            if (line == null) {
                throw new AssertionError("child " + pid() + " printed no line starting with '" + prefix + "' within "
                    + seconds + " s (alive: " + process.isAlive() + ")");
            }
            if (line.startsWith(prefix)) {
                return line;
            }
        }
    }

    /** Waits for the child to exit; returns its exit status. */
    public int waitFor(long seconds) throws InterruptedException {
        if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
            throw new AssertionError("child " + pid() + " did not exit within " + seconds + " s");
        }
        return process.exitValue();
    }

    /** SIGKILL, then reap. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            kill();
        }
    }
}
