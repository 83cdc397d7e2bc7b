package dev.depot.bench.sort;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A {@link SortWorker} JVM: same java and class path as this one. Its stderr is ours; its one result line is
 * parsed into a map. {@link #close} kills it (SIGKILL) if it still runs, and always reaps it.
 */
final class WorkerProcess implements AutoCloseable {
    private final String name;
    private final Process process;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

    private WorkerProcess(String name, Process process) {
        this.name = name;
        this.process = process;
        Thread.ofPlatform().daemon().name(name + "-stdout").start(() -> {
            try (var r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    lines.add(line);
                }
            } catch (IOException ignored) {
                // the worker is gone; result() reports it
            }
        });
    }

    static WorkerProcess start(String name, long heapBytes, long offHeapBytes, List<String> args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("--enable-native-access=ALL-UNNAMED");
        cmd.add("-Xms64m");
        cmd.add("-Xmx" + Math.max(64, heapBytes >> 20) + "m");
        cmd.add("-XX:MaxDirectMemorySize=" + Math.max(64, (offHeapBytes >> 20) + 64) + "m");
        cmd.add("-XX:+UseSerialGC");
        // The same for the baseline and the workers: huge pages halve the cost of first touching the heap here
        // (where the kernel gives them; harmless where it does not).
        cmd.add("-XX:+UseTransparentHugePages");
        cmd.add("-Xmn64m");  // a small young generation: the one big array lives in the old one, which gets the heap
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(SortWorker.class.getName());
        cmd.addAll(args);
        try {
            return new WorkerProcess(name, new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the sort worker " + name + ": " + e.getMessage(), e);
        }
    }

    long pid() {
        return process.pid();
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /**
     * Waits for the worker's result line until {@code deadlineNanos}; fails at once if the worker exits without
     * one.
     */
    Map<String, String> result(long deadlineNanos) throws InterruptedException {
        while (true) {
            String line = lines.poll(100, TimeUnit.MILLISECONDS);
            if (line != null && line.startsWith("result")) {
                Map<String, String> out = new HashMap<>();
                for (String kv : line.substring("result".length()).trim().split(" ")) {
                    int eq = kv.indexOf('=');
                    if (eq > 0) {
                        out.put(kv.substring(0, eq), kv.substring(eq + 1));
                    }
                }
                return out;
            }
            if (line == null && !process.isAlive() && lines.isEmpty()) {
                process.waitFor();
                throw new IllegalStateException("sort worker " + name + " (pid " + pid() + ") exited with status "
                    + process.exitValue() + " before printing its result; see its messages above");
            }
            if (System.nanoTime() - deadlineNanos > 0) {
                throw new IllegalStateException("sort worker " + name + " (pid " + pid() + ") printed no result in time");
            }
        }
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroyForcibly();
        }
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                System.err.println("depot sort: worker " + name + " (pid " + pid() + ") survived SIGKILL for 30 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Waits for every worker's result, failing as soon as one of them fails. */
    static List<Map<String, String>> results(List<WorkerProcess> workers, long deadlineNanos) throws InterruptedException {
        List<Map<String, String>> out = new ArrayList<>();
        for (WorkerProcess w : workers) {
            while (true) {
                for (WorkerProcess other : workers) {
                    if (!other.isAlive() && other.lines.isEmpty() && other.process.exitValue() != 0) {
                        throw new IllegalStateException("sort worker " + other.name + " (pid " + other.pid()
                            + ") failed with status " + other.process.exitValue() + "; see its messages above");
                    }
                }
                try {
                    out.add(w.result(Math.min(deadlineNanos, System.nanoTime() + 1_000_000_000L)));
                    break;
                } catch (IllegalStateException e) {
                    if (!w.isAlive() || System.nanoTime() - deadlineNanos > 0) {
                        throw e;
                    }
                }
            }
        }
        return out;
    }

    /** Bytes of a page, the unit of {@code /proc/PID/statm}. */
    static final long PAGE_BYTES = 4096;

    /**
     * Memory the process holds on its own: its resident anonymous memory ({@code /proc/PID/statm}: resident
     * minus shared, i.e. without file and shared-memory pages, so without the store's), 0 when it is gone.
     * Not the PSS of {@code smaps_rollup}: reading that walks the page tables of the process's store mapping,
     * 5 to 10 ms per process at 10^8 values, every sample, on the cores the workers sort on; statm reads
     * counters.
     */
    static long privateBytes(long pid) {
        try {
            String[] f = java.nio.file.Files.readString(Path.of("/proc", Long.toString(pid), "statm")).trim().split(" ");
            return (Long.parseLong(f[1]) - Long.parseLong(f[2])) * PAGE_BYTES;
        } catch (IOException | RuntimeException e) {
            return 0;  // gone
        }
    }
}
