package dev.depot.bench.sort;

import dev.depot.client.DepotClient;
import dev.depot.core.store.ScratchDirectory;
import dev.depot.server.DepotServer;
import dev.depot.server.ServerConfig;
import dev.depot.shuffle.Shuffle;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;

/**
 * The sort demo's driver ({@code depot sort}): sorts {@code --count} numbers by a sample sort through a Depot
 * shuffle, with worker JVMs it starts and reaps, on a store it starts itself, beside the single-process
 * {@code Arrays.sort} of the same data in the same run. See {@code docs/SHUFFLE.md}.
 *
 * <pre>
 *  depot sort [--count 1e8] [--workers N] [--dtype float64|int64] [--json] [--seed S] [--specials]
 *             [--runs single,1,N] [--no-pretouch] [--no-warmup] [--local-sort buckets|whole]
 * </pre>
 */
public final class SortMain {
    static final String USAGE = "usage: depot sort [--count 1e8] [--workers N] [--dtype float64|int64] [--json]"
        + " [--seed S] [--specials] [--runs single,1,N] [--no-pretouch] [--no-warmup] [--local-sort buckets|whole]";

    static final String HELP = USAGE + """


        Sorts --count numbers (default 1e8; 1e9 is 8 GB) by a sample sort through a Depot shuffle: worker JVMs
        generate the data, sample splitters, partition their share into the shuffle, sort their partition, and
        the result is checked (sorted, same checksum as the input). Beside it, in the same run, the single-process
        Arrays.sort of the same data. Starts a store of its own under /dev/shm and removes it.
          --workers N    worker JVMs of the widest run (default: the number of cores, at least 2)
          --dtype T      float64 (default) or int64
          --runs LIST    what to run, e.g. single,1,4 (default: single,1,N)
          --specials     mix in NaN, -0.0, infinities and duplicates
          --no-pretouch  workers do not touch the store's pages before the timed part (saves a pass over
                         memory in big runs; the first touches are then timed, in partition and shuffle)
          --no-warmup    no JVM runs the warm-up (the sort's steps on small arrays, so that the JIT has
                         compiled them) before its timed part: every process is then measured cold
          --local-sort A whole (default): each worker sorts its partition with one Arrays.sort;
                         buckets: each worker cuts its share into fine buckets of about 65,536 values in
                         the partition pass and sorts its partition bucket by bucket in the cache (as
                         fast here, more memory: docs/DESIGN.md). The baseline is always one
                         Arrays.sort of all the data.
          --seed S       the data's seed (default 1)
          --json         one JSON object instead of the table""";

    /** Settings of one demo run. */
    record Settings(long count, int workers, SortData type, long seed, boolean specials, boolean json, Set<String> runs,
                    boolean preTouch, boolean warmUp, LocalSort localSort) {
        static Settings parse(String[] args) {
            long count = 100_000_000L;
            int workers = Math.max(2, Runtime.getRuntime().availableProcessors());
            SortData type = SortData.FLOAT64;
            long seed = 1;
            boolean specials = false;
            boolean preTouch = true;
            boolean warmUp = true;
            boolean json = false;
            LocalSort localSort = LocalSort.WHOLE;
            String runs = null;
            for (int i = 0; i < args.length; i++) {
                String a = args[i];
                switch (a) {
                    case "--count" -> count = parseCount(value(args, ++i, a));
                    case "--workers" -> workers = Integer.parseInt(value(args, ++i, a));
                    case "--dtype" -> type = SortData.parse(value(args, ++i, a));
                    case "--seed" -> seed = Long.parseLong(value(args, ++i, a));
                    case "--runs" -> runs = value(args, ++i, a);
                    case "--specials" -> specials = true;
                    case "--no-pretouch" -> preTouch = false;
                    case "--no-warmup" -> warmUp = false;
                    case "--local-sort" -> localSort = LocalSort.parse(value(args, ++i, a));
                    case "--json" -> json = true;
                    default -> throw new IllegalArgumentException("unknown option '" + a + "'\n" + USAGE);
                }
            }
            if (count < 1 || workers < 1 || workers > 256) {
                throw new IllegalArgumentException("--count must be >= 1 and --workers 1..256\n" + USAGE);
            }
            Set<String> r = new LinkedHashSet<>(List.of((runs == null ? "single,1," + workers : runs).split(",")));
            for (String run : r) {
                if (!run.equals("single") && !run.matches("[1-9][0-9]{0,2}")) {
                    throw new IllegalArgumentException("--runs lists `single` and worker counts, e.g. single,1,4;"
                        + " got '" + run + "'\n" + USAGE);
                }
            }
            return new Settings(count, workers, type, seed, specials, json, r, preTouch, warmUp, localSort);
        }

        private static String value(String[] args, int i, String option) {
            if (i >= args.length) {
                throw new IllegalArgumentException(option + " needs a value\n" + USAGE);
            }
            return args[i];
        }

        /** {@code 1e9}, {@code 100000000} or {@code 100_000_000}. */
        static long parseCount(String s) {
            double d = Double.parseDouble(s.replace("_", ""));
            if (d != Math.rint(d) || d > Long.MAX_VALUE) {
                throw new IllegalArgumentException("--count must be a whole number, got " + s);
            }
            return (long) d;
        }

        long dataBytes() {
            return count * Long.BYTES;
        }
    }

    private SortMain() {
    }

    public static void main(String[] args) throws Exception {
        System.exit(run(args, System.out, System.err));
    }

    /** The entry point of {@code depot sort}: returns the exit status (0 verified, 1 not, 2 usage). */
    public static int run(String[] args, PrintStream out, PrintStream err) throws InterruptedException {
        if (List.of(args).contains("-h") || List.of(args).contains("--help")) {
            out.println(HELP);
            return 0;
        }
        Settings s;
        try {
            s = Settings.parse(args);
        } catch (IllegalArgumentException e) {
            err.println("depot sort: " + e.getMessage());
            return 2;
        }
        SortReport report = run(s, s.json() ? null : out);
        if (s.json()) {
            out.println(report.json());
        } else {
            report.print(out);
        }
        return report.verified() ? 0 : 1;
    }

    /** Runs every requested configuration; progress goes to {@code progress} (null: quiet). */
    static SortReport run(Settings s, PrintStream progress) throws InterruptedException {
        SortReport report = new SortReport(s);
        for (String r : s.runs()) {
            if (progress != null) {
                progress.printf(Locale.ROOT, "depot sort: running %s...%n", r.equals("single") ? "the single-process sort"
                    : "depot with " + r + " worker(s)");
            }
            report.add(r.equals("single") ? single(s) : depot(s, Integer.parseInt(r.trim())));
        }
        return report;
    }

    /** CPU time of this process (all threads), in seconds. */
    static double driverCpuSeconds() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
            .getOperatingSystemMXBean()).getProcessCpuTime() / 1e9;
    }

    private static SortReport.Run single(Settings s) throws InterruptedException {
        long start = System.nanoTime();
        double cpu = driverCpuSeconds();
        try (WorkerProcess w = WorkerProcess.start("single", s.dataBytes() + (256L << 20), 0,
                List.of("single", Long.toString(s.count()), s.type().name().toLowerCase(), Long.toString(s.seed()),
                    Boolean.toString(s.specials()), Boolean.toString(s.warmUp())));
             MemorySampler mem = new MemorySampler(null)) {
            mem.watch(w.pid());
            Map<String, String> r = w.result(Long.MAX_VALUE);
            return SortReport.Run.of("single", 0, List.of(r), (System.nanoTime() - start) / 1e9, mem.peakBytes(),
                driverCpuSeconds() - cpu, s);
        }
    }

    private static SortReport.Run depot(Settings s, int workers) throws InterruptedException {
        long start = System.nanoTime();
        double cpu = driverCpuSeconds();
        // The store holds the maps' objects. Bucketed, every value goes through its map's object (a worker's own
        // partition too): the data plus a margin for objects' metadata. Whole, only what crosses between workers:
        // a worker's own partition stays in its heap, so about (N - 1)/N of the data, plus a margin for the
        // splitters' rank error.
        long crossing = s.localSort() == LocalSort.BUCKETS ? s.dataBytes() : s.dataBytes() / workers * (workers - 1);
        long capacity = crossing + s.dataBytes() / 32 + (64L << 20) + (long) workers * workers * (64 << 10);
        List<WorkerProcess> procs = new CopyOnWriteArrayList<>();
        // on SIGTERM or Ctrl-C too: no worker outlives the driver, no store stays
        try (ScratchDirectory scratch = new ScratchDirectory("depot-sort", () -> procs.forEach(WorkerProcess::close));
             DepotServer server = DepotServer.start(ServerConfig.defaults().withDirectory(scratch.path())
                 .withCapacity(capacity).withControlSocket(false), msg -> { });
             MemorySampler mem = new MemorySampler(scratch.path())) {
            Path dir = scratch.path();
            DepotClient client = server.client();
            String id = "sort-" + UUID.randomUUID();
            try (Shuffle ready = Shuffle.create(client, id + "-ready", workers, 1);
                 Shuffle samples = Shuffle.create(client, id + "-samples", workers, 1,
                    Shuffle.Options.defaults().withDtype(SortData.INT64.dtype()));
                 Shuffle data = Shuffle.create(client, id, workers, workers,
                     Shuffle.Options.defaults().withDtype(s.type().dtype()))) {
                long share = s.dataBytes() / workers + SortData.BLOCK * (long) Long.BYTES;
                try {
                    for (int w = 0; w < workers; w++) {
                        WorkerProcess p = WorkerProcess.start("worker-" + w, share * 5 / 2 + (256L << 20), 0,
                            List.of("depot", dir.toString(), id, Integer.toString(w), Integer.toString(workers),
                                Long.toString(s.count()), s.type().name().toLowerCase(), Long.toString(s.seed()),
                                Boolean.toString(s.specials()), Boolean.toString(s.preTouch()),
                                Boolean.toString(s.warmUp()), s.localSort().option()));
                        procs.add(p);
                        mem.watch(p.pid());
                    }
                    List<Map<String, String>> results = WorkerProcess.results(procs, Long.MAX_VALUE);
                    return SortReport.Run.of(Integer.toString(workers), workers, results, (System.nanoTime() - start) / 1e9,
                        mem.peakBytes(), driverCpuSeconds() - cpu, s);
                } finally {
                    for (WorkerProcess p : procs) {
                        p.close();  // before the shuffles close: no worker writes into a shuffle being deleted
                    }
                }
            }
        }
    }

    /**
     * Samples, every {@link #SAMPLE_MILLIS}, the memory of the run: the store file (fully reserved when created) plus each
     * watched process's and this process's private memory ({@link WorkerProcess#privateBytes}: resident
     * anonymous memory; store pages excluded, they are the store's).
     */
    static final class MemorySampler implements AutoCloseable {
        /**
         * Between samples. Each reads every process's {@code statm} (counters). It read {@code smaps_rollup},
         * whose page-table walk of each process's store mapping took 5 to 10 ms per process at 10^8 values: at
         * every 250 ms about a tenth of one core, taken from the two cores the two workers sort on.
         */
        static final long SAMPLE_MILLIS = 250;
        private final Path storeDir;
        private final Set<Long> pids = ConcurrentHashMap.newKeySet();
        private final Thread thread;
        private volatile long peak;
        private volatile boolean stop;

        MemorySampler(Path storeDir) {
            this.storeDir = storeDir;
            pids.add(ProcessHandle.current().pid());
            this.thread = Thread.ofPlatform().daemon().name("depot-sort-memory").start(this::loop);
        }

        void watch(long pid) {
            pids.add(pid);
        }

        private void loop() {
            while (!stop) {
                sample();
                try {
                    Thread.sleep(SAMPLE_MILLIS);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }

        private void sample() {
            long total = 0;
            if (storeDir != null) {
                try (Stream<Path> files = Files.list(storeDir)) {
                    for (Path f : files.toList()) {
                        total += Files.size(f);
                    }
                } catch (IOException e) {
                    // not there yet, or gone
                }
            }
            for (long pid : pids) {
                total += WorkerProcess.privateBytes(pid);
            }
            peak = Math.max(peak, total);
        }

        long peakBytes() {
            sample();
            return peak;
        }

        @Override
        public void close() throws InterruptedException {
            stop = true;
            thread.interrupt();
            thread.join();
        }
    }
}
