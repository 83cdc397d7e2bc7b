package dev.depot.bench;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code depot bench NAME|all [--json] [--quick] [--python PATH]}: runs benchmarks and prints, for each measured
 * case, Depot's figures, the baseline measured in the same run, the ratio (how many times better Depot is) and
 * whether the target was met. Timings never fail a run; only errors do (exit status 1) and bad usage (2).
 * {@code --python} chooses the interpreter of the benchmarks run by a Python driver ({@code dask-distributed}).
 */
public final class BenchMain {
    private static final Map<String, Benchmark> BENCHMARKS = new LinkedHashMap<>();

    static {
        for (Benchmark b : List.of(new GetLatencyBench(), new SmallPutBench(), new LargePutBench(),
            new GetSizeBench(), new WakeBench(), new PipelineBench(), new ShareBench(), new AllocBench(),
            new SpillBench(), new PythonGetBench(), new PythonOpsBench(), new DaskBench(), new SparkBench(),
            new PythonScriptBench("dask-distributed", "same-node transfers and DataFrame shuffles (P2P, Depot's) of"
                + " dask.distributed workers through Depot vs plain distributed.LocalCluster",
                "dask_distributed_bench.py", "/usr/bin/python3", "DEPOT_DISTRIBUTED_PYTHON", 6 * Units.GIB,
                Units.GIB), new ScaleBench())) {
            BENCHMARKS.put(b.name(), b);
        }
    }

    private BenchMain() {
    }

    public static void main(String[] args) {
        int status = run(args, System.out, System.err);
        if (status != 0) {
            System.exit(status);
        }
    }

    /** The benchmark names, in the order {@code all} runs them. */
    public static List<String> names() {
        return List.copyOf(BENCHMARKS.keySet());
    }

    /** Runs as {@link #main} does, printing to {@code out} and {@code err}; returns the exit status. */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        boolean json = false;
        boolean quick = false;
        String python = null;
        List<String> names = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--json" -> json = true;
                case "--quick" -> quick = true;
                case "--python" -> {
                    if (i + 1 == args.length) {
                        err.println("depot bench: --python needs the path of an interpreter");
                        usage(err);
                        return 2;
                    }
                    python = args[++i];
                }
                case "-h", "--help" -> {
                    usage(out);
                    return 0;
                }
                default -> {
                    if (a.equals("all")) {
                        names.addAll(BENCHMARKS.keySet());
                    } else if (BENCHMARKS.containsKey(a)) {
                        names.add(a);
                    } else {
                        err.println("depot bench: unknown benchmark '" + a + "'");
                        usage(err);
                        return 2;
                    }
                }
            }
        }
        if (names.isEmpty()) {
            usage(err);
            return 2;
        }
        List<Result> results = new ArrayList<>();
        int status = 0;
        for (String name : names) {
            Benchmark b = BENCHMARKS.get(name);
            if (python != null && b instanceof PythonScriptBench script) {
                b = script.withPython(python);
            }
            if (!json) {
                out.println("== " + name + ": " + b.description() + (quick ? " (quick)" : ""));
            }
            final boolean asJson = json;
            try {
                b.run(quick, r -> {
                    results.add(r);
                    if (asJson) {
                        out.println(r.toJson());
                    } else {
                        printHuman(out, r);
                    }
                    out.flush();
                });
            } catch (Throwable e) {
                err.println("depot bench: " + name + " failed: " + e);
                e.printStackTrace(err);
                status = 1;
            }
        }
        if (!json && !results.isEmpty()) {
            printSummary(out, results);
        }
        return status;
    }

    private static void printHuman(PrintStream out, Result r) {
        out.printf("  %-34s ratio %8sx   target: %s -> %s%n", r.label(), Units.round(r.ratio()), r.target(),
            r.met() ? "met" : "MISSED");
        out.println("    depot:    " + Result.pairs(r.figures()));
        out.println("    baseline: " + Result.pairs(r.baseline()));
    }

    private static void printSummary(PrintStream out, List<Result> results) {
        out.println();
        out.printf("%-12s %-34s %10s  %-4s  %s%n", "benchmark", "case", "ratio", "met", "target");
        for (Result r : results) {
            out.printf("%-12s %-34s %9sx  %-4s  %s%n", r.name(), r.label(), Units.round(r.ratio()),
                r.met() ? "yes" : "NO", r.target());
        }
    }

    private static void usage(PrintStream s) {
        s.println("usage: depot bench NAME|all [--json] [--quick] [--python PATH]");
        s.println("  --json   one JSON object per measured case: name, case, figures, baseline, ratio, target, met");
        s.println("  --quick  a few seconds per benchmark (smoke runs)");
        s.println("  --python the interpreter of dask-distributed's driver, whose distributed release is measured");
        s.println("           (default: $DEPOT_DISTRIBUTED_PYTHON, else /usr/bin/python3)");
        for (Benchmark b : BENCHMARKS.values()) {
            s.printf("  %-12s %s%n", b.name(), b.description());
        }
    }
}
