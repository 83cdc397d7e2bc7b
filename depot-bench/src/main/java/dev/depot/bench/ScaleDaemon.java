package dev.depot.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * A daemon in a child JVM ({@code dev.depot.server.DaemonMain}) on a store directory of its own under /dev/shm,
 * named as {@link BenchStore}'s are. It can be killed with SIGKILL and started again on the same store, which is
 * how recovery is timed. Closing stops the daemon and removes the directory.
 */
final class ScaleDaemon implements AutoCloseable {
    private final Path dir = Path.of("/dev/shm", BenchStore.prefix() + "scale-" + UUID.randomUUID());
    private final long capacity;
    private final int indexSlots;
    private Process process;

    ScaleDaemon(long capacity, int indexSlots) {
        this.capacity = capacity;
        this.indexSlots = indexSlots;
    }

    Path dir() {
        return dir;
    }

    long pid() {
        return process.pid();
    }

    /** Starts the daemon and waits until it serves; returns the nanoseconds from spawn to serving. */
    long start() {
        List<String> cmd = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java"),
            "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
            "dev.depot.server.DaemonMain", "--dir", dir.toString(), "--capacity", Long.toString(capacity),
            "--index-slots", Integer.toString(indexSlots)));
        long t0 = System.nanoTime();
        try {
            process = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
            var lines = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
            for (String line; (line = lines.readLine()) != null; ) {
                if (line.startsWith("depot: serving")) {
                    return System.nanoTime() - t0;
                }
            }
            throw new IllegalStateException("the daemon for " + dir + " exited (status " + process.waitFor()
                + ") before serving");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** SIGKILL, and waits for the process to be gone. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor();
    }

    /** CPU time the daemon process has used so far. */
    Duration cpu() {
        return process.toHandle().info().totalCpuDuration().orElse(Duration.ZERO);
    }

    @Override
    public void close() throws InterruptedException {
        try {
            if (process != null && process.isAlive()) {
                process.destroy();
                if (!process.waitFor(30, TimeUnit.SECONDS)) {
                    kill();
                }
            }
        } finally {
            BenchStore.deleteTree(dir);
        }
    }
}
