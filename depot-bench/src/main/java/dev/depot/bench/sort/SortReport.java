package dev.depot.bench.sort;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The figures of a sort demo: one {@link Run} per configuration, the table, the JSON, the 20-core estimate. */
final class SortReport {
    /** Cores of the machine the estimate is worked out for (Plasma's demo machine). */
    static final int ESTIMATE_CORES = 20;
    static final String[] PHASES = {"generate", "prepare", "ready", "sample", "partition", "shuffle", "sort", "verify"};
    /** The phases {@code sort s} times (the single process has only "sort"). */
    static final String[] TIMED_PHASES = {"sample", "partition", "shuffle", "sort"};

    /**
     * One configuration's figures.
     *
     * @param label     "single", or the number of workers
     * @param sortS     the sort itself: {@code Arrays.sort} for the single process; for Depot, from the moment
     *                  the last worker had generated its values and touched its memory to the end of the last
     *                  local sort (sample + partition + shuffle + local sort): generation and verification are
     *                  outside it in both
     * @param phasesS   per phase, the slowest worker's seconds
     * @param sortCpuS  CPU seconds (user and system) of what {@code sortS} times: for Depot the largest sum over
     *                  one worker of its timed phases. Where other programs share the cores, it is what the sort
     *                  would take on idle ones, waits excluded.
     * @param processes per process (the single one, or each worker in order), its {@link #split}
     * @param driverCpuS CPU seconds of the driver (the command: the store it hosts, the memory sampler) from the
     *                  start of the run's processes to their results
     */
    record Run(String label, int workers, long count, double wallS, double sortS, double sortCpuS, long shuffledBytes,
               long peakBytes, Map<String, Double> phasesS, long checksumIn, long checksumOut, boolean sorted,
               List<Map<String, Double>> processes, double driverCpuS) {
        static Run of(String label, int workers, List<Map<String, String>> results, double wallS, long peakBytes,
                      double driverCpuS, SortMain.Settings s) {
            long count = 0;
            long in = 0;
            long out = 0;
            long shuffled = 0;
            boolean sorted = true;
            long started = 0;
            long ended = 0;
            Long previousLast = null;
            Map<String, Double> phases = new LinkedHashMap<>();
            List<Map<String, Double>> processes = new ArrayList<>();
            double cpu = 0;
            for (Map<String, String> r : results) {
                processes.add(split(r));
                double mine = 0;
                for (String p : TIMED_PHASES) {
                    mine += Long.parseLong(r.getOrDefault(p + "_cpu_ms", "0")) / 1e3;
                }
                cpu = Math.max(cpu, mine);
                long n = Long.parseLong(r.get("count"));
                count += n;
                in += Long.parseLong(r.get("in"));
                out += Long.parseLong(r.get("out"));
                shuffled += Long.parseLong(r.getOrDefault("shuffled", "0"));
                sorted &= Long.parseLong(r.get("disorder")) == -1;
                if (n > 0) {
                    long first = Long.parseLong(r.get("first"));
                    sorted &= previousLast == null || previousLast <= first;  // the workers' ranges are in order
                    previousLast = Long.parseLong(r.get("last"));
                }
                if (r.containsKey("started_at")) {
                    started = Math.max(started, Long.parseLong(r.get("started_at")));
                }
                ended = Math.max(ended, Long.parseLong(r.get("sorted_at")));
                for (String p : PHASES) {
                    if (r.containsKey(p + "_ms")) {
                        phases.merge(p, Long.parseLong(r.get(p + "_ms")) / 1e3, Math::max);
                        phases.merge(p + "_cpu", Long.parseLong(r.getOrDefault(p + "_cpu_ms", "0")) / 1e3, Math::max);
                    }
                }
            }
            double sortS = workers == 0 ? phases.get("sort") : (ended - started) / 1e3;
            return new Run(label, workers, count, wallS, sortS, cpu, shuffled, peakBytes, phases, in, out,
                sorted && count == s.count(), processes, driverCpuS);
        }

        /**
         * Where one process's wall time went, per phase {@code p} it ran, in seconds: {@code p} (wall),
         * {@code p_cpu} (its thread's CPU time), {@code p_queued} (runnable, waiting for a core: other programs or
         * the process's own other threads had it), {@code p_blocked} (the rest: waiting for another worker, for
         * the disk, for a lock), {@code p_other_threads_cpu} (the JIT's and GC's threads, in the same process) and
         * {@code values}, how many it sorted, and {@code anon_huge_bytes}, its memory in transparent huge pages.
         */
        static Map<String, Double> split(Map<String, String> r) {
            Map<String, Double> m = new LinkedHashMap<>();
            m.put("values", Double.parseDouble(r.getOrDefault("count", "0")));
            m.put("anon_huge_bytes", Double.parseDouble(r.getOrDefault("anon_huge_bytes", "-1")));
            for (String p : PHASES) {
                if (!r.containsKey(p + "_ms")) {
                    continue;
                }
                double wall = ms(r, p + "_ms");
                double cpu = ms(r, p + "_cpu_ms");
                double queued = ms(r, p + "_runq_ms");
                m.put(p, wall);
                m.put(p + "_cpu", cpu);
                m.put(p + "_queued", queued);
                m.put(p + "_blocked", Math.max(0, wall - cpu - queued));
                m.put(p + "_other_threads_cpu", Math.max(0, ms(r, p + "_proc_cpu_ms") - cpu));
            }
            return m;
        }

        private static double ms(Map<String, String> r, String key) {
            return Long.parseLong(r.getOrDefault(key, "0")) / 1e3;
        }

        boolean verified() {
            return sorted && checksumIn == checksumOut;
        }

        String title() {
            return workers == 0 ? "single process (Arrays.sort)" : "depot, " + workers + " worker" + (workers == 1 ? "" : "s");
        }
    }

    private final SortMain.Settings settings;
    private final List<Run> runs = new ArrayList<>();

    SortReport(SortMain.Settings settings) {
        this.settings = settings;
    }

    void add(Run r) {
        runs.add(r);
    }

    List<Run> runs() {
        return runs;
    }

    /** Every run sorted and kept its checksum, and all runs sorted the same data. */
    boolean verified() {
        return !runs.isEmpty() && runs.stream().allMatch(Run::verified)
            && runs.stream().map(Run::checksumIn).distinct().count() == 1;
    }

    private Run single() {
        return runs.stream().filter(r -> r.workers() == 0).findFirst().orElse(null);
    }

    /** The run with the most workers. */
    private Run widest() {
        return runs.stream().filter(r -> r.workers() > 0).max((a, b) -> Integer.compare(a.workers(), b.workers()))
            .orElse(null);
    }

    private Run withWorkers(int n) {
        return runs.stream().filter(r -> r.workers() == n).findFirst().orElse(null);
    }

    double speedup(Run r) {
        Run base = single();
        return base == null || r.sortS() <= 0 ? Double.NaN : base.sortS() / r.sortS();
    }

    /** As {@link #speedup} on CPU seconds: the speed-up on idle cores when the machine is shared. */
    double cpuSpeedup(Run r) {
        Run base = single();
        return base == null || r.sortCpuS() <= 0 ? Double.NaN : base.sortCpuS() / r.sortCpuS();
    }

    /**
     * Seconds the widest run's sort would take on {@link #ESTIMATE_CORES} workers, from the CPU seconds of its
     * phases (busiest worker; on an idle machine they are the wall seconds without the waits, on a shared one
     * they are what idle cores would take): sampling as measured (its size does not grow with the data),
     * partitioning with values per worker times the {@link #partitionCost passes over them}, the shuffle copy
     * with bytes per worker (if memory bandwidth keeps up: see {@link #estimateCopyRate}), the local sort with
     * n log n per worker.
     */
    Map<String, Double> estimate() {
        Run r = widest();
        if (r == null) {
            return Map.of();
        }
        double n = (double) settings.count() / r.workers();
        double n20 = (double) settings.count() / ESTIMATE_CORES;
        Map<String, Double> e = new LinkedHashMap<>();
        e.put("sample", cpu(r, "sample"));
        e.put("partition", cpu(r, "partition") * (n20 / n) * partitionCost(ESTIMATE_CORES) / partitionCost(r.workers()));
        // bucketed, the sorts are of buckets of a fixed size: linear in the values per worker
        // a worker copies in what the others send it: (P - 1)/P of its partition
        e.put("shuffle", cpu(r, "shuffle") * (n20 / n) * crossingRatio(r.workers()));
        e.put("sort", settings.localSort() == LocalSort.BUCKETS ? cpu(r, "sort") * n20 / n
            : cpu(r, "sort") * (n20 * log2(n20)) / (n * log2(Math.max(2, n))));
        e.put("total", e.get("sample") + e.get("partition") + e.get("shuffle") + e.get("sort"));
        return e;
    }

    /** How much more of a worker's partition crosses on {@link #ESTIMATE_CORES} workers than on {@code p}. */
    static double crossingRatio(int p) {
        return crossing(ESTIMATE_CORES) / Math.max(crossing(p), crossing(2));
    }

    /** The part of the data that crosses between workers with {@code p} of them: each keeps 1/p. */
    private static double crossing(int p) {
        return (p - 1) / (double) p;
    }

    private static double cpu(Run r, String phase) {
        return r.phasesS().getOrDefault(phase + "_cpu", r.phasesS().get(phase));
    }

    /**
     * Passes over the values of the partition pass: bucketed, two (a counting and a scattering pass,
     * {@link FineBuckets#count}, {@link FineBuckets#scatter}); else one for up to two partitions (a copy, or
     * {@link SampleSort#partitionInPlace}), two for more (a counting and a scattering pass,
     * {@link SampleSort#count}, {@link SampleSort#scatterKeeping}). The splitter search is branch-free and its
     * {@code ceil(log2 P)} compares cost little beside a value's memory traffic (at 10^9 values the partition's
     * CPU time is mostly first touches of store pages), so compares are not counted.
     */
    int partitionCost(int partitions) {
        return partitions <= 2 && settings.localSort() == LocalSort.WHOLE ? 1 : 2;
    }

    /** Bytes per second all {@link #ESTIMATE_CORES} workers together would copy out of the shuffle in the estimate. */
    double estimateCopyRate() {
        Run r = widest();
        Map<String, Double> e = estimate();
        return r == null || e.get("shuffle") <= 0 ? Double.NaN
            : settings.dataBytes() * crossing(ESTIMATE_CORES) / e.get("shuffle");
    }

    private static double log2(double x) {
        return Math.log(x) / Math.log(2);
    }

    void print(PrintStream out) {
        out.printf(Locale.ROOT, "%ndepot sort: %,d %s values (%s), %d core(s)%n%n", settings.count(),
            settings.type().name().toLowerCase(), bytes(settings.dataBytes()), Runtime.getRuntime().availableProcessors());
        out.printf(Locale.ROOT, "%-30s %9s %9s %9s %9s %9s %11s %22s%n", "run", "wall s", "sort s", "speed-up",
            "cpu s", "cpu x", "shuffled", "peak memory");
        for (Run r : runs) {
            out.printf(Locale.ROOT, "%-30s %9.2f %9.2f %8.2fx %9.2f %8.2fx %11s %10s (%4.2fx data)%n", r.title(), r.wallS(),
                r.sortS(), speedup(r), r.sortCpuS(), cpuSpeedup(r), r.workers() == 0 ? "-" : bytes(r.shuffledBytes()),
                bytes(r.peakBytes()), (double) r.peakBytes() / settings.dataBytes());
        }
        out.println();
        out.println("sort s: Arrays.sort alone for the single process; for Depot, from the last worker ready (values"
            + " generated, memory touched) to the last local sort done (sample + partition + shuffle + local sort)."
            + " speed-up: single-process sort s / sort s. cpu s: the CPU time (user + system) of the same steps, for"
            + " Depot of its busiest worker; cpu x: the speed-up by it, what idle cores would give on a shared machine.");
        out.println(settings.localSort() == LocalSort.BUCKETS
            ? "local sort: buckets: each worker writes every value of its share once into its fine bucket (about "
                + String.format(Locale.ROOT, "%,d", FineBuckets.TARGET_VALUES) + " values each, a linear map of the value"
                + " over the samples' range) in its map's object, then copies its partition's buckets from every map"
                + " and sorts each with Arrays.sort in the cache. The 1-worker row is that algorithm alone, without"
                + " parallelism; --local-sort whole sorts each partition with one Arrays.sort. The single process is"
                + " always one Arrays.sort of all the data."
            : "local sort: whole: each worker sorts its partition with one Arrays.sort, as the single process does.");
        out.println("peak memory: the store file plus every process's resident anonymous memory (statm), sampled every "
            + SortMain.MemorySampler.SAMPLE_MILLIS + " ms.");
        Run any = runs.isEmpty() ? null : runs.getFirst();
        out.printf(Locale.ROOT, "verified: %s%n", verified()
            ? String.format(Locale.ROOT, "every run sorted all %,d values in Arrays.sort order; checksum %016x equals"
                + " the input's", settings.count(), any.checksumOut())
            : "NO: " + failures());
        Run w = widest();
        if (w != null) {
            StringBuilder sb = new StringBuilder("time split (" + w.title() + ", slowest worker per phase):");
            for (String p : PHASES) {
                sb.append(String.format(Locale.ROOT, " %s %.2f s (cpu %.2f s),", p.equals("sort") ? "local sort" : p,
                    w.phasesS().get(p), w.phasesS().get(p + "_cpu")));
            }
            out.println(sb.substring(0, sb.length() - 1));
            printProcesses(out);
            Map<String, Double> e = estimate();
            Run base = single();
            String sortScale = settings.localSort() == LocalSort.BUCKETS ? "n (buckets of a fixed size)" : "n log n";
            out.printf(Locale.ROOT, "%d-core estimate (from the phases' CPU seconds): sample %.2f s; partition %.2f s"
                    + " x %d/%d (values per worker) x %d/%d (passes) = %.2f s; shuffle %.2f s x %d/%d x %.2f (the part"
                    + " that crosses, (P-1)/P) = %.2f s (%s/s"
                    + " copied by all, if memory bandwidth holds); local sort %.2f s x %s = %.2f s; total %.2f s%s%n",
                ESTIMATE_CORES, e.get("sample"), cpu(w, "partition"), w.workers(), ESTIMATE_CORES,
                partitionCost(ESTIMATE_CORES), partitionCost(w.workers()), e.get("partition"), cpu(w, "shuffle"),
                w.workers(), ESTIMATE_CORES, crossingRatio(w.workers()), e.get("shuffle"), bytes((long) estimateCopyRate()), cpu(w, "sort"),
                sortScale, e.get("sort"), e.get("total"), base == null ? ""
                    : String.format(Locale.ROOT, ", %.1fx the single-process sort's %.2f CPU s", base.sortCpuS() / e.get("total"),
                        base.sortCpuS()));
        }
    }

    /**
     * Per process of the single run and the widest one, where the timed phases' wall time went: wall = cpu +
     * queued + blocked seconds, and the CPU seconds of the process's other threads (JIT, GC) beside them.
     */
    private void printProcesses(PrintStream out) {
        out.println("per process, timed phases: wall s = cpu + queued (runnable, no core free) + blocked (waiting);"
            + " others: the CPU s of the process's other threads (JIT, GC)");
        for (Run r : java.util.stream.Stream.of(single(), widest()).filter(java.util.Objects::nonNull).toList()) {
            for (int i = 0; i < r.processes().size(); i++) {
                Map<String, Double> m = r.processes().get(i);
                StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "  %-9s %,12.0f values:",
                    r.workers() == 0 ? "single" : "worker " + i, m.get("values")));
                for (String p : TIMED_PHASES) {
                    if (m.containsKey(p)) {
                        sb.append(String.format(Locale.ROOT, " %s %.2f = %.2f + %.2f + %.2f (others %.2f),",
                            p.equals("sort") ? "local sort" : p, m.get(p), m.get(p + "_cpu"), m.get(p + "_queued"),
                            m.get(p + "_blocked"), m.get(p + "_other_threads_cpu")));
                    }
                }
                out.println(sb.substring(0, sb.length() - 1));
            }
            out.printf(Locale.ROOT, "  driver    %.2f CPU s over the run's %.2f s (the store it hosts, the memory"
                + " sampler)%n", r.driverCpuS(), r.wallS());
        }
    }

    private String failures() {
        List<String> f = new ArrayList<>();
        for (Run r : runs) {
            if (!r.sorted()) {
                f.add(r.title() + " is not sorted or lost values (" + r.count() + " of " + settings.count() + ")");
            }
            if (r.checksumIn() != r.checksumOut()) {
                f.add(r.title() + " changed the checksum");
            }
        }
        if (runs.stream().map(Run::checksumIn).distinct().count() > 1) {
            f.add("the runs generated different data");
        }
        return String.join("; ", f);
    }

    static String bytes(long b) {
        if (b >= 1L << 30) {
            return String.format(Locale.ROOT, "%.2f GiB", b / (double) (1L << 30));
        }
        return String.format(Locale.ROOT, "%.1f MiB", b / (double) (1L << 20));
    }

    String json() {
        Run base = single();
        Run w = widest();
        Run one = withWorkers(1);
        StringBuilder sb = new StringBuilder("{");
        field(sb, "count", settings.count());
        field(sb, "workers", settings.workers());
        field(sb, "dtype", "\"" + settings.type().name().toLowerCase() + "\"");
        field(sb, "data_bytes", settings.dataBytes());
        field(sb, "local_sort", "\"" + settings.localSort().option() + "\"");
        field(sb, "single_process_s", base == null ? null : num(base.sortS()));
        field(sb, "depot_s", w == null ? null : num(w.sortS()));
        field(sb, "depot_1_worker_s", one == null ? null : num(one.sortS()));
        field(sb, "speedup", w == null ? null : num(speedup(w)));
        field(sb, "single_process_cpu_s", base == null ? null : num(base.sortCpuS()));
        field(sb, "depot_cpu_s", w == null ? null : num(w.sortCpuS()));
        field(sb, "cpu_speedup", w == null ? null : num(cpuSpeedup(w)));
        field(sb, "verified", verified());
        field(sb, "bytes_shuffled", w == null ? null : w.shuffledBytes());
        field(sb, "peak_memory_bytes", runs.stream().mapToLong(Run::peakBytes).max().orElse(0));
        if (w != null) {
            StringBuilder p = new StringBuilder("{");
            w.phasesS().forEach((k, v) -> field(p, k + "_s", num(v)));
            field(sb, "phases", p.substring(0, p.length() - 1) + "}");
            field(sb, "estimate_" + ESTIMATE_CORES + "_cores_s", num(estimate().get("total")));
        }
        StringBuilder list = new StringBuilder("[");
        for (Run r : runs) {
            StringBuilder o = new StringBuilder("{");
            field(o, "run", "\"" + r.label() + "\"");
            field(o, "workers", r.workers());
            field(o, "wall_s", num(r.wallS()));
            field(o, "sort_s", num(r.sortS()));
            field(o, "speedup", num(speedup(r)));
            field(o, "sort_cpu_s", num(r.sortCpuS()));
            field(o, "bytes_shuffled", r.shuffledBytes());
            field(o, "peak_memory_bytes", r.peakBytes());
            field(o, "driver_cpu_s", num(r.driverCpuS()));
            field(o, "verified", r.verified());
            StringBuilder procs = new StringBuilder("[");
            for (Map<String, Double> m : r.processes()) {
                StringBuilder po = new StringBuilder("{");
                m.forEach((k, v) -> {
                    boolean count = k.equals("values") || k.equals("anon_huge_bytes");
                    field(po, count ? k : k + "_s", count ? v.longValue() : num(v));
                });
                procs.append(po, 0, po.length() - 1).append("},");
            }
            field(o, "processes", (r.processes().isEmpty() ? "[" : procs.substring(0, procs.length() - 1)) + "]");
            list.append(o, 0, o.length() - 1).append("},");
        }
        field(sb, "runs", (runs.isEmpty() ? "[" : list.substring(0, list.length() - 1)) + "]");
        return sb.substring(0, sb.length() - 1) + "}";
    }

    private static String num(double d) {
        return Double.isFinite(d) ? String.format(Locale.ROOT, "%.4f", d) : "null";
    }

    private static void field(StringBuilder sb, String name, Object value) {
        sb.append('"').append(name).append("\":").append(value).append(',');
    }
}
