package dev.depot.bench;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectView;
import dev.depot.client.ObjectWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.HdrHistogram.Histogram;

/**
 * Get time (get, read the first and last byte, release) for 1 KiB..1 GiB objects through a client of its own:
 * zero-copy, so it should not grow with the size. Baseline: what a copying store pays, a MemorySegment.copy of
 * the object into already-touched memory.
 */
final class GetSizeBench implements Benchmark {
    private static final double FLAT_FACTOR = 2.0;

    @Override
    public String name() {
        return "get-size";
    }

    @Override
    public String description() {
        return "get time for 1 KiB..1 GiB objects (zero-copy: flat) vs copying the object out";
    }

    @Override
    public void run(boolean quick, Consumer<Result> out) {
        List<Long> sizes = quick ? List.of(Units.KIB, Units.MIB, 64 * Units.MIB)
            : List.of(Units.KIB, Units.MIB, 64 * Units.MIB, Units.GIB);
        long total = sizes.stream().mapToLong(Long::longValue).sum();
        int gets = quick ? 20_000 : 200_000;
        try (Arena arena = Arena.ofConfined(); BenchStore store = BenchStore.start(total + 16 * Units.MIB);
             DepotClient writer = DepotClient.open(store.dir());
             DepotClient reader = DepotClient.open(store.dir())) {
            for (long size : sizes) {
                try (ObjectWriter w = writer.create(idOf(size), size)) {
                    w.data().fill((byte) 1);
                    w.seal();
                }
            }
            for (long size : sizes) {
                getTimes(reader, idOf(size), gets / 2);
            }
            long smallest = 0;
            for (long size : sizes) {
                ObjectId id = idOf(size);
                Histogram h = getTimes(reader, id, gets);
                long copyNanos = copyTime(reader, id, arena, size);
                long p50 = h.getValueAtPercentile(50);
                if (smallest == 0) {
                    smallest = p50;
                }
                Map<String, Object> figures = new LinkedHashMap<>();
                figures.put("size_bytes", size);
                figures.put("p50_ns", p50);
                figures.put("p99_ns", h.getValueAtPercentile(99));
                figures.put("gets", gets);
                Map<String, Object> baseline = new LinkedHashMap<>();
                baseline.put("kind", "copy of the object into touched memory (a copying get)");
                baseline.put("p50_ns", copyNanos);
                out.accept(new Result(name(), Units.size(size), figures, baseline, copyNanos / (double) p50,
                    "p50 within 2x of the 1 KiB get (flat)", p50 <= FLAT_FACTOR * smallest));
            }
        }
    }

    private static ObjectId idOf(long size) {
        return ObjectId.of("depot-bench/get-size/" + size);
    }

    private static Histogram getTimes(DepotClient client, ObjectId id, int gets) {
        Histogram h = Latencies.histogram();
        long sink = 0;
        for (int i = 0; i < gets; i++) {
            long t0 = System.nanoTime();
            try (ObjectView v = client.get(id, 0)) {
                MemorySegment d = v.data();
                sink += d.get(ValueLayout.JAVA_BYTE, 0) + d.get(ValueLayout.JAVA_BYTE, d.byteSize() - 1);
            }
            Latencies.record(h, System.nanoTime() - t0);
        }
        if (sink == 42) {
            System.err.print("");
        }
        return h;
    }

    /** Median of a few copies of the object into a touched buffer of this process. */
    private static long copyTime(DepotClient client, ObjectId id, Arena arena, long size) {
        MemorySegment dst = arena.allocate(size, 64);
        int reps = Math.clamp(4 * Units.GIB / size, 5, 2001);
        Histogram h = Latencies.histogram();
        try (ObjectView v = client.get(id, 0)) {
            for (int r = 0; r < reps; r++) {
                long t0 = System.nanoTime();
                MemorySegment.copy(v.data(), 0, dst, 0, size);
                Latencies.record(h, System.nanoTime() - t0);
            }
        }
        return h.getValueAtPercentile(50);
    }
}
