package dev.depot.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * depot.dask beside Dask's own schedulers (and dask-on-ray and LocalCluster where installed), all measured in
 * the same run by the Python driver {@code dask_bench.py} (a resource of this module, with its modules beside it),
 * which prints one JSON object per case. The interpreter is {@code $DEPOT_BENCH_PYTHON}, else {@code python3}; it
 * needs Dask and NumPy.
 * A full run whose interpreter lacks Ray runs the driver again in a benchmark environment it builds once per machine
 * ({@code dask_bench_env.py}, {@code dask_bench_requirements.txt}), and measures LocalCluster under an interpreter
 * that has {@code distributed}; {@code --quick} (the smoke test) does neither.
 */
final class DaskBench implements Benchmark {
    private static final String SCRIPT = "dask_bench.py";
    /** The driver and what it imports and reads beside it: its modules and the benchmark environment. */
    private static final List<String> RESOURCES = List.of(SCRIPT, "dask_bench_cases.py", "dask_bench_graphs.py",
        "dask_bench_measure.py", "dask_bench_parts.py", "dask_bench_references.py", "dask_bench_schedulers.py",
        "dask_bench_env.py", "dask_bench_requirements.txt", "procfs.py");
    private static final ObjectMapper JSON = new ObjectMapper();
    /** The driver's exit status when its interpreter lacks Dask or NumPy (it says so on stderr). */
    private static final int SKIPPED = 3;

    @Override
    public String name() {
        return "dask";
    }

    @Override
    public String description() {
        return "depot.dask vs Dask's threads/processes (and dask-on-ray, LocalCluster): pipeline, broadcast, "
            + "overhead, cache";
    }

    @Override
    public void run(boolean quick, Consumer<Result> out) throws Exception {
        Path python = PythonGetBench.pythonPackageDir();
        Path dir = Files.createTempDirectory("depot-dask-bench");
        Path script = dir.resolve(SCRIPT);
        // A full run: the driver starts the store's daemon itself (depot.start), as a Python user would. --quick
        // (the smoke test, which runs before the launcher is built): this process serves the store and the driver
        // attaches to it.
        BenchStore served = quick ? BenchStore.start(Units.GIB, true) : null;
        Path store = served != null ? served.dir() : Path.of("/dev/shm", "depot-dask-bench-" + UUID.randomUUID());
        try {
            for (String resource : RESOURCES) {
                try (InputStream in = DaskBench.class.getResourceAsStream(resource)) {
                    Files.write(dir.resolve(resource), in.readAllBytes());
                }
            }
            String interpreter = System.getenv().getOrDefault("DEPOT_BENCH_PYTHON", "python3");
            List<String> cmd = new ArrayList<>(List.of(interpreter, script.toString(), store.toString(),
                Long.toString((quick ? 1L : 4L) * Units.GIB)));
            if (quick) {
                cmd.add("--quick");
            }
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT);
            pb.environment().put("PYTHONPATH", python.toString());
            Process p = pb.start();
            // the driver, and whatever it started (its workers, Ray, a LocalCluster), go with this JVM even when it
            // is stopped by a signal, which skips the finally below
            Thread reaper = new Thread(() -> {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
            }, "depot-dask-bench-reaper");
            Runtime.getRuntime().addShutdownHook(reaper);
            try (BufferedReader r = new BufferedReader(
                     new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = r.readLine(); line != null; line = r.readLine()) {
                    if (line.startsWith("{")) {
                        out.accept(result(JSON.readTree(line)));
                    }
                }
                if (p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == SKIPPED) {
                    return;
                }
                if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                    throw new IllegalStateException("dask: the Python driver failed (exit "
                        + (p.isAlive() ? "none, still running" : p.exitValue()) + ")");
                }
            } finally {
                p.destroyForcibly();
                p.waitFor();
                try {
                    Runtime.getRuntime().removeShutdownHook(reaper);
                } catch (IllegalStateException shuttingDown) {
                    // the hook runs anyway
                }
            }
        } finally {
            BenchStore.deleteTree(dir); // the resources and the __pycache__ of their imports
            if (served != null) {
                served.close();
            }
            BenchStore.deleteTree(store);
        }
    }

    private Result result(JsonNode n) {
        return new Result(name(), n.get("case").asText(), map(n.get("figures")), map(n.get("baseline")),
            n.get("ratio").asDouble(), n.get("target").asText(), n.get("met").asBoolean());
    }

    private static Map<String, Object> map(JsonNode n) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> e : n.properties()) {
            JsonNode v = e.getValue();
            m.put(e.getKey(), v.isIntegralNumber() ? v.asLong() : v.isNumber() ? v.asDouble() : v.asText());
        }
        return m;
    }
}
