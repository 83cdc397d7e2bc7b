package dev.depot.bench;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A benchmark whose driver is a Python script among this module's resources, written into a temporary directory
 * and run as {@code PYTHON SCRIPT --dir DIR --json [--quick]}, with the checkout's {@code python/} directory on its
 * path, against a store that this process serves in {@code DIR} (so the driver needs no daemon launcher) and
 * removes afterwards. Each line it prints is one measured case, a JSON object with the fields of {@link Result}
 * ({@code name}, {@code case}, {@code figures}, {@code baseline}, {@code ratio}, {@code target}, {@code met}),
 * handed on as soon as it is read.
 *
 * <p>The interpreter is the one given with {@code depot bench --python PATH} ({@link #withPython}), else the one
 * in the environment variable the benchmark names, else the benchmark's default (the one that has the libraries it
 * compares against): the interpreter chooses the releases measured.
 */
final class PythonScriptBench implements Benchmark {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final TypeReference<Map<String, Object>> MAP = new TypeReference<>() { };
    private static final long TIMEOUT_MINUTES = 60;

    private final String name;
    private final String description;
    private final String script;
    private final String python;
    private final String pythonVariable;
    private final long capacity;
    private final long quickCapacity;
    /** The interpreter given on the command line, or null. */
    private final String explicitPython;

    PythonScriptBench(String name, String description, String script, String python, String pythonVariable,
                      long capacity, long quickCapacity) {
        this(name, description, script, python, pythonVariable, capacity, quickCapacity, null);
    }

    private PythonScriptBench(String name, String description, String script, String python,
                              String pythonVariable, long capacity, long quickCapacity, String explicitPython) {
        this.name = name;
        this.description = description;
        this.script = script;
        this.python = python;
        this.pythonVariable = pythonVariable;
        this.capacity = capacity;
        this.quickCapacity = quickCapacity;
        this.explicitPython = explicitPython;
    }

    /** This benchmark run by the interpreter {@code interpreter}, whatever the environment says. */
    PythonScriptBench withPython(String interpreter) {
        return new PythonScriptBench(name, description, script, python, pythonVariable, capacity, quickCapacity,
            interpreter);
    }

    /** The interpreter that runs the driver. */
    String interpreter() {
        return explicitPython != null ? explicitPython : System.getenv().getOrDefault(pythonVariable, python);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String description() {
        return description;
    }

    @Override
    public void run(boolean quick, Consumer<Result> out) throws Exception {
        Path drivers = Files.createTempDirectory("depot-bench-" + name);
        try (BenchStore store = BenchStore.start(quick ? quickCapacity : capacity, true)) {
            try (InputStream in = PythonScriptBench.class.getResourceAsStream(script)) {
                if (in == null) {
                    throw new IllegalStateException("no resource " + script + " beside " + getClass().getName());
                }
                Files.write(drivers.resolve(script), in.readAllBytes());
            }
            run(quick, drivers.resolve(script), store.dir().toString(), out);
        } finally {
            BenchStore.deleteTree(drivers);
        }
    }

    private void run(boolean quick, Path driver, String dir, Consumer<Result> out) throws Exception {
        String interpreter = interpreter();
        List<String> cmd = new ArrayList<>(List.of(interpreter, driver.toString(), "--dir", dir, "--json"));
        if (quick) {
            cmd.add("--quick");
        }
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT);
        pb.environment().put("PYTHONPATH", PythonGetBench.pythonPackageDir().toString());
        Process p = pb.start();
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(p.getInputStream(),
            StandardCharsets.UTF_8))) {
            for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                if (line.startsWith("{")) {
                    out.accept(result(JSON.readValue(line, MAP)));
                }
            }
            if (!p.waitFor(TIMEOUT_MINUTES, TimeUnit.MINUTES) || p.exitValue() != 0) {
                throw new IllegalStateException(name + ": the Python driver `" + String.join(" ", cmd)
                    + "` failed (exit " + (p.isAlive() ? "none, still running" : p.exitValue()) + ")");
            }
        } finally {
            p.destroyForcibly();
            p.waitFor();
        }
    }

    @SuppressWarnings("unchecked")
    private Result result(Map<String, Object> m) {
        Object ratio = m.get("ratio");
        Object met = m.get("met");
        return new Result(name, String.valueOf(m.get("case")), (Map<String, Object>) m.get("figures"),
            (Map<String, Object>) m.get("baseline"), ratio instanceof Number n ? n.doubleValue() : Double.NaN,
            String.valueOf(m.getOrDefault("target", "")), Boolean.TRUE.equals(met));
    }
}
