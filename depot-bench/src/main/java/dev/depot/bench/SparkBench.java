package dev.depot.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * {@code depot bench spark}: runs {@code dev.depot.bench.spark.SparkBenchMain} (module depot-bench-spark, which
 * brings Spark; depot-bench does not) in a JVM with that module's class path and Spark's Java 25 flags (from
 * depot-spark), and reports its {@code result} lines. Needs a built checkout
 * ({@code mvn -pl depot-bench-spark -am package}).
 */
final class SparkBench implements Benchmark {
    @Override
    public String name() {
        return "spark";
    }

    @Override
    public String description() {
        return "a second Spark application reads a 1 GB DataFrame from Depot vs Parquet vs recomputing; Java Arrow "
            + "open + sum of 1 GiB from Depot vs an Arrow IPC file";
    }

    @Override
    public void run(boolean quick, Consumer<Result> out) throws Exception {
        Path checkout = PythonGetBench.pythonPackageDir().getParent();
        Path target = checkout.resolve("depot-bench-spark").resolve("target");
        Path listing = target.resolve("classpath.txt");
        Path options = checkout.resolve("depot-spark/target/classes/dev/depot/spark/java-options.txt");
        for (Path needed : List.of(listing, options)) {
            if (!Files.isRegularFile(needed)) {
                throw new IllegalStateException("depot bench spark needs depot-bench-spark built: mvn -B -pl "
                    + "depot-bench-spark -am package -DskipTests (missing " + needed + ")");
            }
        }
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(List.of(Files.readString(options).trim().split("\\s+")));
        cmd.addAll(List.of("-Xmx3g", "-cp", target.resolve("classes") + ":" + Files.readString(listing).trim(),
            "dev.depot.bench.spark.SparkBenchMain", quick ? "--quick" : "--full"));
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                String[] f = line.split("\t");
                if (f.length != 6 || !f[0].equals("result")) {
                    continue;
                }
                double depotMs = Double.parseDouble(f[2]);
                double baselineMs = Double.parseDouble(f[4]);
                double wanted = Double.parseDouble(f[5]);
                double ratio = baselineMs / depotMs;
                Map<String, Object> figures = new LinkedHashMap<>();
                figures.put("ms", Units.round(depotMs));
                Map<String, Object> baseline = new LinkedHashMap<>();
                baseline.put(f[3] + "_ms", Units.round(baselineMs));
                out.accept(new Result(name(), f[1] + " vs " + f[3], figures, baseline, ratio,
                    ">= " + wanted + "x", ratio >= wanted));
            }
        }
        if (p.waitFor() != 0) {
            throw new IllegalStateException("SparkBenchMain exited with status " + p.exitValue());
        }
    }
}
