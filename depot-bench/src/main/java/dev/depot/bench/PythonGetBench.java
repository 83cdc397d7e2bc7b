package dev.depot.bench;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.depot.client.ArrayMetadata;
import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectWriter;
import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A Python process gets a float64 array that this Java process put (1 GiB; quick: 64 MiB) and sums it,
 * against the same array pickled through a {@code multiprocessing} pipe to a second Python process that sums
 * it, in the same run. The Python side is {@code python_get.py} (a resource of this module), run with the
 * repository's {@code python/} directory on its path.
 */
final class PythonGetBench implements Benchmark {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String SCRIPT = "python_get.py";
    private static final int REPS = 5;

    @Override
    public String name() {
        return "python-get";
    }

    @Override
    public String description() {
        return "a Python process gets and sums a 1 GiB float64 array put by Java vs a pickled multiprocessing pipe";
    }

    @Override
    public void run(boolean quick, Consumer<Result> out) throws Exception {
        long bytes = quick ? 64 * Units.MIB : Units.GIB;
        Path python = pythonPackageDir();
        Path script = Files.createTempFile("depot-python-get", ".py");
        try (InputStream in = PythonGetBench.class.getResourceAsStream(SCRIPT);
             BenchStore store = BenchStore.start(bytes + 16 * Units.MIB, true)) {
            Files.write(script, in.readAllBytes());
            String name = "depot-bench/python-get";
            try (DepotClient depot = DepotClient.open(store.dir());
                 ObjectWriter w = depot.create(ObjectId.of(name), bytes,
                     ArrayMetadata.of(ArrayMetadata.FLOAT64, bytes / Double.BYTES).encode())) {
                MemorySegment data = w.data();
                for (long i = 0; i < bytes / Double.BYTES; i++) {
                    data.setAtIndex(ValueLayout.JAVA_DOUBLE, i, i);
                }
                w.seal();
            }
            String json = runPython(python, script, store.dir(), name, bytes);
            long getNs = field(json, "get_ns");
            long getAndSum = field(json, "get_and_sum_ns");
            long pipeAndSum = field(json, "pipe_and_sum_ns");
            long sumOnly = field(json, "sum_only_ns");
            Map<String, Object> figures = new LinkedHashMap<>();
            figures.put("size_bytes", bytes);
            figures.put("get_ns", getNs);
            figures.put("get_and_sum_ns", getAndSum);
            figures.put("first_get_and_sum_ns", field(json, "first_get_and_sum_ns"));
            figures.put("sum_only_ns", sumOnly);
            Map<String, Object> baseline = new LinkedHashMap<>();
            baseline.put("kind", "numpy array pickled through a multiprocessing pipe, then summed");
            baseline.put("pipe_and_sum_ns", pipeAndSum);
            out.accept(new Result(name(), Units.size(bytes), figures, baseline, pipeAndSum / (double) getAndSum,
                "get + sum faster than pipe + sum; get alone independent of size", getAndSum < pipeAndSum));
        } finally {
            Files.deleteIfExists(script);
        }
    }

    private static String runPython(Path pythonDir, Path script, Path dir, String name, long bytes)
        throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder("python3", script.toString(), dir.toString(), name,
            Long.toString(bytes), Integer.toString(REPS)).redirectError(ProcessBuilder.Redirect.INHERIT);
        pb.environment().put("PYTHONPATH", pythonDir.toString());
        Process p = pb.start();
        try {
            String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            if (!p.waitFor(300, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException("python-get: the Python side failed (exit "
                    + (p.isAlive() ? "none, still running" : p.exitValue()) + "): " + output);
            }
            return output;
        } finally {
            p.destroyForcibly();
            p.waitFor();
        }
    }

    /** The repository's {@code python/} directory: from {@code DEPOT_PYTHONPATH}, or above this code's location. */
    static Path pythonPackageDir() {
        String env = System.getenv("DEPOT_PYTHONPATH");
        if (env != null && Files.isRegularFile(Path.of(env, "depot", "__init__.py"))) {
            return Path.of(env);
        }
        try {
            Path p = Path.of(PythonGetBench.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            for (; p != null; p = p.getParent()) {
                if (Files.isRegularFile(p.resolve("python").resolve("depot").resolve("__init__.py"))) {
                    return p.resolve("python");
                }
            }
        } catch (java.net.URISyntaxException | SecurityException e) {
            // fall through to the message
        }
        throw new IllegalStateException("python-get needs the Python client: run it from a Depot checkout or set"
            + " DEPOT_PYTHONPATH to its python/ directory");
    }

    private static long field(String json, String key) {
        JsonNode value;
        try {
            value = JSON.readTree(json).get(key);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("python-get: the Python side printed no JSON object: " + json, e);
        }
        if (value == null || !value.canConvertToLong()) {
            throw new IllegalStateException("python-get: no whole number " + key + " in the Python side's output: "
                + json);
        }
        return value.asLong();
    }
}
