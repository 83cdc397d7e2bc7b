package dev.depot.torture;

import dev.depot.client.StoreStats;
import dev.depot.core.store.ScratchDirectory;
import dev.depot.server.DepotServer;
import dev.depot.server.ServerConfig;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Soak: a daemon and {@code --workers} client processes under mixed load for {@code --minutes} (or
 * {@code --seconds}). Prints, every {@code --every} seconds, total ops/s, the worst p99 get and put latency,
 * the workers' and the daemon's private RSS ({@code RssAnon}: the store's pages are shared memory and do not
 * count), the daemon's resident store pages, and the store's used bytes; at the end it compares the last
 * quarter of the run with the second and reports growth of private RSS or used bytes beyond the live data.
 *
 * <pre>  scripts/soak --minutes 10 [--workers 4]</pre>
 */
public final class Soak {
    static final long CAPACITY = 512L << 20;
    /** How often the daemon's live heap is measured (after a full GC). */
    static final long LIVE_HEAP_EVERY_SECONDS = 10;

    /** The daemon's (this process's) heap still in use after a full collection: what a leak would grow. */
    static long liveHeapKbAfterGc() {
        System.gc();
        var heap = java.lang.management.ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
        return heap.getUsed() / 1024;
    }

    /** One sample of the whole system. */
    public record Sample(long second, long opsPerSecond, double getP99Micros, double putP99Micros, long workersRssKb,
                         long daemonRssKb, long daemonShmemKb, long daemonLiveHeapKb, long usedBytes, long objectCount) {
    }

    /** The run's samples and the problems found. */
    public record Result(List<Sample> samples, List<String> problems) {
        public boolean ok() {
            return problems.isEmpty();
        }
    }

    private Soak() {
    }

    public static void main(String[] args) throws Exception {
        long seconds = 600;
        int workers = 4;
        int every = 10;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--minutes" -> seconds = Long.parseLong(args[++i]) * 60;
                case "--seconds" -> seconds = Long.parseLong(args[++i]);
                case "--workers" -> workers = Integer.parseInt(args[++i]);
                case "--every" -> every = Integer.parseInt(args[++i]);
                default -> {
                    System.err.println("usage: soak [--minutes M | --seconds S] [--workers K] [--every S]");
                    System.exit(2);
                }
            }
        }
        int printEvery = every;
        System.out.printf("%6s %10s %10s %10s %14s %14s %14s %14s %12s %8s%n", "second", "ops/s", "get p99us",
            "put p99us", "workers anon", "daemon anon", "daemon shmem", "daemon live", "used bytes", "objects");
        Result r = run(workers, seconds, s -> {
            if (s.second() % printEvery == 0) {
                System.out.printf("%6d %10d %10.1f %10.1f %12d K %12d K %12d K %12d K %12d %8d%n", s.second(),
                    s.opsPerSecond(), s.getP99Micros(), s.putP99Micros(), s.workersRssKb(), s.daemonRssKb(),
                    s.daemonShmemKb(), s.daemonLiveHeapKb(), s.usedBytes(), s.objectCount());
            }
        });
        r.problems().forEach(p -> System.out.println("PROBLEM " + p));
        System.out.println(r.ok() ? "soak ok" : "soak FAILED");
        System.exit(r.ok() ? 0 : 1);
    }

    public static Result run(int workers, long seconds, java.util.function.Consumer<Sample> onSample) throws Exception {
        ScratchDirectory scratch = new ScratchDirectory("depot-soak");
        Path dir = scratch.path();
        List<ChildProcess> children = new ArrayList<>();
        List<Sample> samples = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        try (DepotServer server = DepotServer.start(ServerConfig.defaults().withDirectory(dir).withCapacity(CAPACITY)
            .withControlSocket(false), msg -> { })) {
            for (int k = 0; k < workers; k++) {
                children.add(new ChildProcess(SoakWorker.class, dir.toString(), Integer.toString(k), Long.toString(seconds + 5)));
            }
            long[] rss = new long[workers];
            long liveHeapKb = 0;
            for (long second = 1; second <= seconds; second++) {
                long ops = 0;
                double getP99 = 0;
                double putP99 = 0;
                for (int k = 0; k < workers; k++) {
                    String line = children.get(k).await("", 60);
                    if (line.startsWith("CORRUPT")) {
                        problems.add(line);
                        return new Result(samples, problems);
                    }
                    if (!line.startsWith("stat")) {
                        continue;
                    }
                    ops += field(line, "ops=");
                    getP99 = Math.max(getP99, Double.parseDouble(text(line, "get_p99_us=")));
                    putP99 = Math.max(putP99, Double.parseDouble(text(line, "put_p99_us=")));
                    rss[k] = field(line, "rss_kb=");
                }
                StoreStats st = server.client().stats();
                long workersRss = 0;
                for (long r : rss) {
                    workersRss += r;
                }
                String self = Long.toString(ProcessHandle.current().pid());
                if (second % LIVE_HEAP_EVERY_SECONDS == 1) {
                    liveHeapKb = liveHeapKbAfterGc();
                }
                Sample s = new Sample(second, ops, getP99, putP99, workersRss, SoakWorker.rssKb(self),
                    SoakWorker.shmemKb(self), liveHeapKb, st.usedBytes(), st.objectCount());
                samples.add(s);
                onSample.accept(s);
            }
            checkGrowth(samples, problems);
        } finally {
            for (ChildProcess c : children) {
                c.kill();
            }
            scratch.close();
        }
        return new Result(samples, problems);
    }

    /**
     * Used bytes are bounded by the namespace (they cannot exceed the live data). Private RSS may grow early
     * (JIT, heap sizing), so the last quarter is compared with the second, with a tolerance of 64 MiB: for the
     * workers their private RSS (heaps capped at 128 MiB each), for the daemon its live heap after a full GC
     * (its RSS only tells how far the collector let the heap grow).
     */
    static void checkGrowth(List<Sample> samples, List<String> problems) {
        int n = samples.size();
        if (n < 8) {
            return;
        }
        long maxNamespaceBytes = 200L * 4 * 256 * 1024;
        for (Sample s : samples) {
            if (s.usedBytes() > maxNamespaceBytes) {
                problems.add("used bytes " + s.usedBytes() + " at second " + s.second() + " exceed the live data bound "
                    + maxNamespaceBytes);
                break;
            }
        }
        checkGrowth("workers' private RSS", samples, Sample::workersRssKb, problems);
        // The daemon's RSS follows its heap up to the heap's limit; what it keeps alive is what would leak.
        checkGrowth("the daemon's live heap", samples, Sample::daemonLiveHeapKb, problems);
    }

    private static void checkGrowth(String what, List<Sample> samples, java.util.function.ToLongFunction<Sample> kb,
                                    List<String> problems) {
        int n = samples.size();
        long early = 0;
        long late = 0;
        for (int i = n / 4; i < n / 2; i++) {
            early = Math.max(early, kb.applyAsLong(samples.get(i)));
        }
        for (int i = 3 * n / 4; i < n; i++) {
            late = Math.max(late, kb.applyAsLong(samples.get(i)));
        }
        if (late > early + 64 * 1024) {
            problems.add(what + " grew from " + early + " KiB to " + late + " KiB");
        }
    }

    private static long field(String line, String key) {
        return Long.parseLong(text(line, key));
    }

    private static String text(String line, String key) {
        int i = line.indexOf(key) + key.length();
        int j = line.indexOf(' ', i);
        return j < 0 ? line.substring(i) : line.substring(i, j);
    }
}
