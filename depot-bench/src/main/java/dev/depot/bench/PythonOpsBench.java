package dev.depot.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * Single Python client operations, p50 and p99: get + release of 1 KiB and 64 MiB, {@code get_array} of 64 MiB,
 * {@code put} of 1 KiB (quick: 4 MiB and 10 MB instead of 64 MiB and 100 MB), {@code put_object}/{@code get_object} of a 64 MiB array and a 100 MB pandas DataFrame,
 * each beside a baseline measured in the same run by the same Python process (the data pickled through a
 * {@code multiprocessing} pipe; the UNIX-socket round trip of two Python processes). The Python side is
 * {@code python_ops.py}; the interpreter is {@code $DEPOT_BENCH_PYTHON}, else {@code python3} (it needs NumPy,
 * and pandas for the DataFrame case, which is skipped without it). It runs a copy of the package in a temporary
 * folder, with the C extension {@code depot._native} compiled into it as an install would
 * ({@code setup.py build_ext}; without a compiler the copy runs on ctypes, and the results say so).
 */
final class PythonOpsBench implements Benchmark {
    private static final String SCRIPT = "python_ops.py";
    private static final ObjectMapper JSON = new ObjectMapper();

    @Override
    public String name() {
        return "python-ops";
    }

    @Override
    public String description() {
        return "Python get/put/get_array/put_object/get_object p50 and p99 vs a pickled multiprocessing pipe";
    }

    @Override
    public void run(boolean quick, Consumer<Result> out) throws Exception {
        Path python = PythonGetBench.pythonPackageDir();
        Path script = Files.createTempFile("depot-python-ops", ".py");
        Path site = Files.createTempDirectory("depot-python-ops-site");
        try (InputStream in = PythonOpsBench.class.getResourceAsStream(SCRIPT);
             BenchStore store = BenchStore.start(Units.GIB, true)) {
            Files.write(script, in.readAllBytes());
            String interpreter = System.getenv().getOrDefault("DEPOT_BENCH_PYTHON", "python3");
            installWithExtension(interpreter, python, site);
            ProcessBuilder pb = new ProcessBuilder(interpreter, script.toString(), store.dir().toString(),
                quick ? "1" : "0").redirectError(ProcessBuilder.Redirect.INHERIT);
            pb.environment().put("PYTHONPATH", site.toString());
            Process p = pb.start();
            try (BufferedReader lines = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = lines.readLine()) != null; ) {
                    if (!line.isBlank()) {
                        out.accept(result(JSON.readTree(line)));
                    }
                }
                if (!p.waitFor(1800, TimeUnit.SECONDS) || p.exitValue() != 0) {
                    throw new IllegalStateException("python-ops: the Python side failed (exit "
                        + (p.isAlive() ? "none, still running" : p.exitValue()) + ")");
                }
            } finally {
                p.destroyForcibly();
                p.waitFor();
            }
        } finally {
            Files.deleteIfExists(script);
            deleteTree(site);
        }
    }

    /**
     * Copies the package from {@code python} into {@code site} and compiles its C extension there, as
     * {@code pip install} would, without writing into the checkout. A failed compile leaves the ctypes path.
     */
    private static void installWithExtension(String interpreter, Path python, Path site)
            throws IOException, InterruptedException {
        Path source = python.resolve("depot");
        try (Stream<Path> files = Files.walk(source)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                String name = f.getFileName().toString();
                if (f.toString().contains("__pycache__") || name.endsWith(".so") || name.endsWith(".pyc")) {
                    continue;
                }
                Path to = site.resolve("depot").resolve(source.relativize(f).toString());
                if (Files.isDirectory(f)) {
                    Files.createDirectories(to);
                } else {
                    Files.copy(f, to);
                }
            }
        }
        Process build = new ProcessBuilder(interpreter, "setup.py", "-q", "build_ext", "--build-lib",
            site.toString(), "--build-temp", site.resolve(".build").toString())
            .directory(python.toFile()).redirectErrorStream(true).start();
        String output = new String(build.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!build.waitFor(300, TimeUnit.SECONDS) || build.exitValue() != 0) {
            build.destroyForcibly();
            System.err.println("python-ops: the C extension was not built; the client runs on ctypes:\n" + output);
        }
    }

    private static void deleteTree(Path root) throws IOException {
        try (Stream<Path> files = Files.walk(root)) {
            for (Path f : (Iterable<Path>) files.sorted(Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(f);
            }
        }
    }

    private Result result(JsonNode line) throws IOException {
        String label = line.path("case").asText();
        if (line.has("skipped")) {
            return new Result(name(), label, Map.of("skipped", line.path("skipped").asText()),
                Map.of("kind", "not measured"), 0, "skipped", false);
        }
        Map<String, Object> figures = new LinkedHashMap<>();
        figures.put("p50_ns", line.path("p50_ns").asLong());
        figures.put("p99_ns", line.path("p99_ns").asLong());
        figures.put("samples", line.path("n").asLong());
        Map<String, Object> baseline = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> e : line.path("baseline").properties()) {
            baseline.put(e.getKey(), e.getValue().isNumber() ? (Object) e.getValue().asLong() : e.getValue().asText());
        }
        long p50 = line.path("p50_ns").asLong();
        long baseP50 = line.path("baseline").path("p50_ns").asLong();
        JsonNode target = line.path("target_ns");
        boolean hasTarget = target.isNumber();
        // A breakdown figure has no target of its own: "none (...)" says what it is for
        JsonNode note = line.path("target_text");
        // with a target, a text says what it is made of
        String targetText = note.isTextual() ? note.asText()
            : hasTarget ? "p50 <= " + target.asLong() / 1000 + " us" : "faster than the baseline";
        boolean met = hasTarget ? p50 <= target.asLong() : note.isTextual() || p50 < baseP50;
        return new Result(name(), label, figures, baseline, baseP50 / (double) Math.max(1, p50), targetText, met);
    }
}
