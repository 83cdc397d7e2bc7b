package dev.depot.bench.spark;

import dev.depot.client.DepotClient;
import dev.depot.core.store.ScratchDirectory;
import dev.depot.server.DepotServer;
import dev.depot.spark.DepotNode;
import dev.depot.spark.DepotPlugin;
import dev.depot.spark.SparkJavaOptions;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * The Spark benchmark ({@code depot bench spark}): this first application writes a numeric DataFrame (1 GB; quick:
 * 64 MB) to Depot and to Parquet on local disk; a second application (a child JVM) then reads it back from each and
 * aggregates every column, against recomputing it, best of {@link #REPS}. Then {@link ArrowBenchMain} in another
 * JVM opens and sums a 1 GiB Arrow batch from Depot against reading the same Arrow IPC stream from a file. Prints
 * {@code result} lines (tab-separated: case, Depot ms, baseline name, baseline ms, target ratio) that depot-bench
 * turns into its table.
 */
public final class SparkBenchMain {
    /**
     * Runs of each query, the best counted, for every source alike. Five, not three: the reading JVM's JIT is still
     * compiling Spark's generated code during the first runs of each query form (JFR: 0.4-1.5 s of compiler time
     * in each early timed query on 2 cores), which the best of three did not always leave behind.
     */
    static final int REPS = 5;
    static final int COLUMNS = 8;

    private SparkBenchMain() {
    }

    public static void main(String[] args) throws Exception {
        boolean quick = args.length > 0 && args[0].equals("--quick");
        long bytes = quick ? 64L << 20 : 1L << 30;
        long rows = bytes / (COLUMNS * Long.BYTES);
        ScratchDirectory scratch = new ScratchDirectory("depot-bench-spark");
        Path dir = scratch.path();
        Path parquet = Files.createTempDirectory("depot-bench-parquet");
        try (scratch; DepotClient depot = DepotServer.embedded(dir, bytes * 5 / 2 + (64L << 20))) {
            SparkSession spark = session("depot-bench-writer", dir, 2, "2g");
            try {
                Dataset<Row> df = generate(spark, rows);
                df.write().format("depot").mode("overwrite").option("maxRowsPerObject", 1 << 20).save("bench");
                df.write().mode("overwrite").parquet(parquet.toString());
            } finally {
                spark.stop();
            }
            System.out.println("wrote " + rows + " rows x " + COLUMNS + " columns (" + (bytes >> 20) + " MiB)");
            runChild(ReadMain.class, dir, parquet, Long.toString(rows));
            depot.delete(dev.depot.client.ObjectId.of("spark/bench"));
            runChild(ArrowBenchMain.class, dir, parquet, quick ? "--quick" : "--full");
        } finally {
            ScratchDirectory.deleteTree(parquet);
        }
    }

    static SparkSession session(String name, Path dir, int cores, String memory) {
        return SparkSession.builder().master("local[" + cores + "]").appName(name)
            .config("spark.ui.enabled", "false")
            .config("spark.driver.host", "localhost")
            .config("spark.driver.memory", memory)
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.plugins", DepotPlugin.class.getName())
            .config(DepotNode.DIR_CONF, dir.toString())
            .config(DepotNode.DAEMON_CONF, "none")
            .getOrCreate();
    }

    static Dataset<Row> generate(SparkSession spark, long rows) {
        List<String> cols = new ArrayList<>();
        cols.add("id");
        for (int i = 1; i < COLUMNS; i++) {
            cols.add(i % 2 == 0 ? "id * " + i + " AS c" + i : "id * " + i + ".5D AS c" + i);
        }
        return spark.range(0, rows, 1, 8).selectExpr(cols.toArray(String[]::new));
    }

    /** Sums every column: touches all the data, returns one row. */
    static Row aggregate(Dataset<Row> df) {
        String[] sums = Stream.of(df.columns()).map(c -> "sum(" + c + ")").toArray(String[]::new);
        return df.selectExpr(sums).first();
    }

    /** Best of {@link #REPS} runs of {@code work}, in milliseconds. */
    static double bestMillis(Supplier<Object> work) {
        long best = Long.MAX_VALUE;
        for (int i = 0; i < REPS; i++) {
            long t = System.nanoTime();
            work.get();
            best = Math.min(best, System.nanoTime() - t);
        }
        return best / 1e6;
    }

    static void result(String label, double depotMs, String baseline, double baselineMs, double target) {
        System.out.println("result\t" + label + "\t" + depotMs + "\t" + baseline + "\t" + baselineMs + "\t" + target);
    }

    /** The second application. */
    public static final class ReadMain {
        private ReadMain() {
        }

        public static void main(String[] args) {
            Path dir = Path.of(args[0]);
            String parquet = args[1];
            long rows = Long.parseLong(args[2]);
            SparkSession spark = session("depot-bench-reader", dir, 2, "2g");
            try {
                Row a = aggregate(spark.read().format("depot").load("bench"));
                Row b = aggregate(spark.read().parquet(parquet));
                if (!a.equals(b)) {
                    throw new AssertionError("Depot and Parquet disagree: " + a + " vs " + b);
                }
                // Three consumers of the same read. Spark 4's default (ANSI) sum of longs checks every addition
                // for overflow through a closure call, the bulk of the query's CPU for Depot; Parquet pays it too.
                double depotMs = bestMillis(() -> aggregate(spark.read().format("depot").load("bench")));
                double parquetMs = bestMillis(() -> aggregate(spark.read().parquet(parquet)));
                double recomputeMs = bestMillis(() -> aggregate(generate(spark, rows)));
                result("second application reads the DataFrame (sum of every column)", depotMs, "parquet",
                    parquetMs, 5);
                result("second application reads the DataFrame (sum of every column)", depotMs, "recompute",
                    recomputeMs, 1);
                spark.conf().set("spark.sql.ansi.enabled", "false");
                double depotPlainMs = bestMillis(() -> aggregate(spark.read().format("depot").load("bench")));
                double parquetPlainMs = bestMillis(() -> aggregate(spark.read().parquet(parquet)));
                spark.conf().unset("spark.sql.ansi.enabled");
                result("second application reads the DataFrame (sum, non-ANSI)", depotPlainMs, "parquet",
                    parquetPlainMs, 5);
                double depotNoopMs = bestMillis(() -> noop(spark.read().format("depot").load("bench")));
                double parquetNoopMs = bestMillis(() -> noop(spark.read().parquet(parquet)));
                result("second application reads the DataFrame (every row to Spark's noop sink)", depotNoopMs,
                    "parquet", parquetNoopMs, 5);
            } finally {
                spark.stop();
            }
        }

        /** Spark's own benchmark sink: every row is produced (every value read), nothing is computed. */
        private static Object noop(Dataset<Row> df) {
            df.write().format("noop").mode("overwrite").save();
            return df;
        }
    }

    private static void runChild(Class<?> main, Path dir, Path parquet, String arg) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(SparkJavaOptions.list());
        // No Arrow settings: the depot source reads numeric columns through its own vectors (DepotColumnVector),
        // so the second application runs with Spark's and Arrow's defaults, as Parquet does.
        cmd.add("-Xmx3g");
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(main.getName());
        cmd.add(dir.toString());
        cmd.add(parquet.toString());
        cmd.add(arg);
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                System.out.println(line);
            }
        } finally {
            if (p.waitFor() != 0) {
                throw new IllegalStateException(main.getSimpleName() + " exited with status " + p.exitValue());
            }
        }
    }
}
