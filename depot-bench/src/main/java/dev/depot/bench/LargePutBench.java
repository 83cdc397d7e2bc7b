package dev.depot.bench;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Put bandwidth (create, copy in, seal) for 1 MiB..1 GiB: first use of fresh store memory (page faults) and
 * steady state (delete and put the same size again, so the block is reused). Baseline: MemorySegment.copy into
 * already-touched memory of this process.
 */
final class LargePutBench implements Benchmark {
    private static final ObjectId ID = ObjectId.of("depot-bench/large-put");
    private static final double TARGET_RATIO = 0.8;

    @Override
    public String name() {
        return "large-put";
    }

    @Override
    public String description() {
        return "put bandwidth 1 MiB..1 GiB, first use and steady state, vs MemorySegment.copy into touched memory";
    }

    @Override
    public void run(boolean quick, Consumer<Result> out) {
        List<Long> sizes = quick ? List.of(Units.MIB, 8 * Units.MIB, 64 * Units.MIB)
            : List.of(Units.MIB, 16 * Units.MIB, 256 * Units.MIB, Units.GIB);
        long bytesPerSize = quick ? 256 * Units.MIB : 4 * Units.GIB;
        warmUp();
        for (long size : sizes) {
            int reps = (int) Math.max(quick ? 3 : 4, bytesPerSize / size);
            out.accept(measure(size, reps));
        }
    }

    private Result measure(long size, int reps) {
        try (Arena arena = Arena.ofConfined(); BenchStore store = BenchStore.start(size + 8 * Units.MIB);
             DepotClient client = DepotClient.open(store.dir())) {
            MemorySegment src = arena.allocate(size, 64);
            src.fill((byte) 7);

            long t0 = System.nanoTime();
            put(client, src);
            long firstNanos = System.nanoTime() - t0;

            // Steady state: Depot puts and baseline copies alternate, so both see the same machine (other
            // processes, memory bandwidth) over the same time.
            MemorySegment dst = arena.allocate(size, 64);
            MemorySegment.copy(src, 0, dst, 0, size);
            client.delete(ID);
            put(client, src);
            long steadyNanos = 0;
            long copyNanos = 0;
            for (int r = 0; r < reps; r++) {
                t0 = System.nanoTime();
                client.delete(ID);
                put(client, src);
                long t1 = System.nanoTime();
                MemorySegment.copy(src, 0, dst, 0, size);
                long t2 = System.nanoTime();
                steadyNanos += t1 - t0;
                copyNanos += t2 - t1;
            }

            double steady = Units.gibPerSecond(size * reps, steadyNanos);
            double copy = Units.gibPerSecond(size * reps, copyNanos);
            Map<String, Object> figures = new LinkedHashMap<>();
            figures.put("size_bytes", size);
            figures.put("first_use_gib_per_s", Units.gibPerSecond(size, firstNanos));
            figures.put("first_use_ms", firstNanos / 1e6);
            figures.put("steady_gib_per_s", steady);
            figures.put("steady_us_per_put", steadyNanos / 1e3 / reps);
            figures.put("reps", reps);
            Map<String, Object> baseline = new LinkedHashMap<>();
            baseline.put("kind", "MemorySegment.copy into touched memory, same process");
            baseline.put("steady_gib_per_s", copy);
            baseline.put("steady_us_per_put", copyNanos / 1e3 / reps);
            return new Result(name(), Units.size(size), figures, baseline, steady / copy,
                "steady state >= 0.8x memcpy bandwidth", steady / copy >= TARGET_RATIO);
        }
    }

    /** Compiles the put path before anything is timed. */
    private static void warmUp() {
        try (Arena arena = Arena.ofConfined(); BenchStore store = BenchStore.start(16 * Units.MIB);
             DepotClient client = DepotClient.open(store.dir())) {
            MemorySegment src = arena.allocate(64 * Units.KIB);
            for (int i = 0; i < 5000; i++) {
                put(client, src);
                client.delete(ID);
            }
        }
    }

    private static void put(DepotClient client, MemorySegment src) {
        try (ObjectWriter w = client.create(ID, src.byteSize())) {
            MemorySegment.copy(src, 0, w.data(), 0, src.byteSize());
            w.seal();
        }
    }
}
