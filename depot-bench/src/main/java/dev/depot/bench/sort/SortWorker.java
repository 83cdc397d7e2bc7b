package dev.depot.bench.sort;

import dev.depot.client.DepotClient;
import dev.depot.client.internal.StoreClients;
import dev.depot.shuffle.Shuffle;
import dev.depot.shuffle.ShuffleReader;
import dev.depot.shuffle.ShuffleWriter;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A worker JVM of the sort demo, started and reaped by {@link SortMain}. Prints one line,
 * {@code result key=value ...}, and exits.
 *
 * <ul>
 * <li>{@code single COUNT DTYPE SEED SPECIALS WARMUP}: the baseline: generates all values into one array, runs
 *     the {@link WarmUp}, and sorts the array with {@code Arrays.sort}.</li>
 * <li>{@code depot DIR SHUFFLE WORKER WORKERS COUNT DTYPE SEED SPECIALS PRETOUCH WARMUP LOCALSORT}: one worker of
 *     the sample sort: generates its share into its work array, publishes samples through the shuffle
 *     {@code SHUFFLE-samples}, partitions its share by the splitters and sorts its partition. {@code buckets}:
 *     every value goes once into its fine bucket in its map's object of shuffle {@code SHUFFLE} (its own
 *     partition's too), then the worker copies its partition's buckets from every map into its work array, each
 *     sorted right after its copy ({@link FineBuckets}). {@code whole}: its own partition stays in the work array,
 *     the others' go into its map's object; it appends the other maps' slices behind its own part and sorts the
 *     whole partition at once.</li>
 * </ul>
 */
public final class SortWorker {
    /** How long a worker waits for the others (samples, slices) before it gives up. */
    static final long WAIT_MILLIS = 30 * 60_000L;

    private final Map<String, Object> result = new LinkedHashMap<>();
    /** CPU time of this thread (user and system, page faults included) per phase: robust to a loaded machine. */
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private long phaseStart = System.nanoTime();
    private long phaseCpuStart = THREADS.getCurrentThreadCpuTime();
    private long[] phaseOther = PhaseCosts.sample();

    private SortWorker() {
    }

    public static void main(String[] args) {
        SortWorker w = new SortWorker();
        switch (args[0]) {
            case "single" -> w.single(Long.parseLong(args[1]), SortData.parse(args[2]), Long.parseLong(args[3]),
                Boolean.parseBoolean(args[4]), Boolean.parseBoolean(args[5]));
            case "depot" -> w.depot(Path.of(args[1]), args[2], Integer.parseInt(args[3]), Integer.parseInt(args[4]),
                Long.parseLong(args[5]), SortData.parse(args[6]), Long.parseLong(args[7]), Boolean.parseBoolean(args[8]),
                Boolean.parseBoolean(args[9]), Boolean.parseBoolean(args[10]), LocalSort.parse(args[11]));
            default -> throw new IllegalArgumentException("role is single or depot, got " + args[0]);
        }
        StringBuilder line = new StringBuilder("result");
        w.result.forEach((k, v) -> line.append(' ').append(k).append('=').append(v));
        System.out.println(line);
    }

    private void phase(String name) {
        long now = System.nanoTime();
        long cpu = THREADS.getCurrentThreadCpuTime();
        result.put(name + "_ms", (now - phaseStart) / 1_000_000);
        result.put(name + "_cpu_ms", (cpu - phaseCpuStart) / 1_000_000);
        phaseStart = now;
        phaseCpuStart = cpu;
        long[] other = PhaseCosts.sample();
        for (int i = 0; i < PhaseCosts.NAMES.length; i++) {
            result.put(name + "_" + PhaseCosts.NAMES[i], other[i] - phaseOther[i]);
        }
        phaseOther = other;
    }

    private void single(long count, SortData type, long seed, boolean specials, boolean warmUp) {
        if (count > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException(count + " values are more than one Java array holds");
        }
        MemorySegment all = SampleSort.newArray(type, count);
        result.put("in", type.generate(seed, 0, count, specials, all));
        phase("generate");
        if (warmUp) {
            result.put("warmup_checksum", WarmUp.run(type, specials));
        }
        phase("prepare");
        SampleSort.sortInPlace(all);
        phase("sort");
        verify(type, all);
    }

    private void verify(SortData type, MemorySegment sorted) {
        result.put("sorted_at", System.currentTimeMillis());
        long n = sorted.byteSize() / Long.BYTES;
        result.put("count", n);
        result.put("disorder", SampleSort.firstDisorder(type, sorted));
        result.put("out", SampleSort.checksum(sorted));
        if (n > 0) {
            result.put("first", type.key(sorted.getAtIndex(ValueLayout.JAVA_LONG, 0)));
            result.put("last", type.key(sorted.getAtIndex(ValueLayout.JAVA_LONG, n - 1)));
        }
        phase("verify");
        result.put("anon_huge_bytes", anonHugeBytes());
    }

    /**
     * The process's anonymous memory in transparent huge pages ({@code AnonHugePages} of
     * {@code /proc/self/smaps_rollup}), read once after the timed part: a work array that did not get them
     * (fragmented memory) takes a TLB miss every 4 KiB, and that worker's sort is slower.
     */
    private static long anonHugeBytes() {
        try {
            for (String line : java.nio.file.Files.readAllLines(Path.of("/proc/self/smaps_rollup"))) {
                if (line.startsWith("AnonHugePages:")) {
                    return Long.parseLong(line.split("\\s+")[1]) * 1024;
                }
            }
        } catch (java.io.IOException | RuntimeException e) {
            // not Linux, or no such field
        }
        return -1;
    }

    private void depot(Path dir, String shuffleId, int worker, int workers, long count, SortData type, long seed,
                       boolean specials, boolean preTouch, boolean warmUp, LocalSort localSort) {
        try (DepotClient client = DepotClient.open(dir);
             Shuffle ready = Shuffle.open(client, shuffleId + "-ready", WAIT_MILLIS);
             Shuffle samples = Shuffle.open(client, shuffleId + "-samples", WAIT_MILLIS);
             Shuffle data = Shuffle.open(client, shuffleId, WAIT_MILLIS)) {
            phase("start");
            long from = SortData.firstValueOf(count, worker, workers);
            long to = SortData.firstValueOf(count, worker + 1, workers);
            long[] splitters;
            long[] allSamples;
            // One array for this worker's values, first its share of the input, then its partition: memory
            // touched once, before the sort is timed, and no more than the share plus a margin (the splitters'
            // rank error; a partition that does not fit gets a new array).
            long share = to - from;
            MemorySegment work = SampleSort.newArray(type, Math.min(Integer.MAX_VALUE - 8L, share + share / 16 + 1024));
            MemorySegment mine = work.asSlice(0, share * Long.BYTES);
            result.put("in", type.generate(seed, from, to, specials, mine));
            phase("generate");

            // What the timed part touches is touched now, as the baseline's array is while it is generated:
            // every page of the store heap, where this map's object and the other maps' slices for this
            // partition will be. A first touch through a new mapping costs microseconds per page here; in the
            // timed part it would be counted against Depot, and a long-lived store's heap is touched once per
            // process.
            result.put("touched_pages", preTouch ? StoreClients.storeOf(client).preTouchHeap() : 0);
            // The same warm-up as the single process's (WarmUp says why).
            if (warmUp) {
                result.put("warmup_checksum", WarmUp.run(type, specials));
            }
            phase("prepare");
            // The timed sort starts when every worker is here: all the data exists. A barrier, so that no worker
            // samples before the last one is ready (its sampling would be outside the timed part).
            ready.writeMap(worker, List.of(MemorySegment.NULL));
            ready.reader(0, WAIT_MILLIS).close();
            phase("ready");
            result.put("started_at", System.currentTimeMillis());

            long[] keys = SampleSort.sampleKeys(type, mine, SampleSort.samplesPerWorker(workers), seed + worker);
            samples.writeMap(worker, List.of(MemorySegment.ofArray(keys)));
            try (ShuffleReader r = samples.reader(0, WAIT_MILLIS)) {
                allSamples = SampleSort.gather(SortData.INT64, r.slices()).toArray(ValueLayout.JAVA_LONG);
                splitters = SampleSort.splitters(allSamples, workers);
            }
            phase("sample");

            MemorySegment part = localSort == LocalSort.BUCKETS
                ? bucketed(data, worker, workers, count, type, mine, work, allSamples)
                : whole(data, worker, workers, type, mine, work, share, splitters);
            phase("sort");
            verify(type, part);
        }
    }

    /**
     * The bucketed local sort: every value once into its fine bucket in this map's object (all partitions, this
     * worker's own too), then this partition's buckets of every map copied into the work array, each sorted
     * after its copy. The copy and the sorts are the phase {@code sort}.
     */
    private MemorySegment bucketed(Shuffle data, int worker, int workers, long count, SortData type, MemorySegment mine,
                                   MemorySegment work, long[] samples) {
        FineBuckets buckets = FineBuckets.of(type, samples, workers, FineBuckets.perPartition(count, workers));
        long[] counts = buckets.count(mine);
        long[] bytes = buckets.partitionBytes(counts);
        try (ShuffleWriter w = data.writer(worker, bytes)) {
            buckets.scatter(mine, counts, w.data());
            w.commit();
        }
        result.put("shuffled", mine.byteSize() - bytes[worker]);  // what crosses to other workers
        result.put("staged", bytes[worker]);                      // this worker's own part, through its object
        result.put("buckets", buckets.buckets());
        phase("partition");
        try (ShuffleReader r = data.reader(worker, WAIT_MILLIS)) {  // waits for the other maps' commits
            List<MemorySegment> slices = r.slices();
            phase("shuffle");
            return buckets.gatherSorted(worker, slices, work);
        }
    }

    /**
     * The local sort of the whole partition: this worker's own partition stays in its work array (moved to the
     * front); only the other partitions' values go into its map's object, each written once (its own slice there
     * is empty); the other maps' slices are appended behind it and the partition is sorted at once.
     */
    private MemorySegment whole(Shuffle data, int worker, int workers, SortData type, MemorySegment mine,
                                MemorySegment work, long share, long[] splitters) {
        long[] bytes = new long[workers];
        long kept;
        if (workers == 1) {
            kept = share;
            data.writer(worker, bytes).commit();
        } else if (workers == 2) {
            kept = SampleSort.partitionInPlace(type, mine, splitters[0], worker);
            bytes[1 - worker] = (share - kept) * Long.BYTES;
            try (ShuffleWriter w = data.writer(worker, bytes)) {
                MemorySegment.copy(mine, kept * Long.BYTES, w.partition(1 - worker), 0, bytes[1 - worker]);
                w.commit();
            }
        } else {
            long[] counts = SampleSort.count(type, mine, splitters);
            for (int p = 0; p < workers; p++) {
                bytes[p] = p == worker ? 0 : counts[p] * Long.BYTES;
            }
            try (ShuffleWriter w = data.writer(worker, bytes)) {
                MemorySegment[] out = new MemorySegment[workers];
                for (int p = 0; p < workers; p++) {
                    out[p] = w.partition(p);
                }
                kept = SampleSort.scatterKeeping(type, mine, splitters, worker, out);
                w.commit();
            }
        }
        result.put("shuffled", (share - kept) * Long.BYTES);
        phase("partition");
        MemorySegment part;
        try (ShuffleReader r = data.reader(worker, WAIT_MILLIS)) {  // waits for the other maps' commits
            part = SampleSort.gatherAfter(type, work, kept * Long.BYTES, r.slices());
        }
        phase("shuffle");
        SampleSort.sortInPlace(part);
        return part;
    }
}
