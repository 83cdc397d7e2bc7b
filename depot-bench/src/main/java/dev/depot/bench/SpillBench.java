package dev.depot.bench;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectView;
import dev.depot.client.ObjectWriter;
import dev.depot.client.StoreStats;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.function.Consumer;

/**
 * Writes twice the store's capacity of KEEP objects (so that the daemon spills the older half to disk), then
 * reads every one back and verifies it (restoring the spilled ones, which spills others). Reports the
 * throughput of the write phase and of the read phase, and the spill and restore counts, against writing and
 * reading the same bytes as plain files in a directory of the same file system, in the same run.
 */
final class SpillBench implements Benchmark {
    private static final long OBJECT_SIZE = 4 * Units.MIB;

    @Override
    public String name() {
        return "spill";
    }

    @Override
    public String description() {
        return "2x capacity of KEEP objects written and read back verified through spill/restore vs plain files";
    }

    @Override
    public void run(boolean quick, Consumer<Result> out) throws Throwable {
        long capacity = quick ? 64 * Units.MIB : 256 * Units.MIB;
        int count = (int) (2 * capacity / OBJECT_SIZE);
        Path root = Path.of(System.getProperty("java.io.tmpdir"), "depot-bench-spill-" + UUID.randomUUID());
        Map<String, Object> figures = new LinkedHashMap<>();
        Map<String, Object> baseline = new LinkedHashMap<>();
        double depotRead;
        double fileRead;
        try {
            try (BenchStore store = BenchStore.start(capacity, false, root.resolve("spill"));
                 DepotClient client = DepotClient.open(store.dir())) {
                long t0 = System.nanoTime();
                for (int i = 0; i < count; i++) {
                    try (ObjectWriter w = client.create(id(i), OBJECT_SIZE, new byte[0], DepotClient.CreateOption.KEEP)) {
                        fill(w.data(), i);
                        w.seal();
                    }
                }
                long t1 = System.nanoTime();
                StoreStats afterWrite = client.stats();
                for (int i = 0; i < count; i++) {
                    try (ObjectView v = client.get(id(i), 120_000)) {
                        verify(v.data(), i);
                    }
                }
                long t2 = System.nanoTime();
                StoreStats s = client.stats();
                figures.put("capacity_bytes", capacity);
                figures.put("objects", count);
                figures.put("object_bytes", OBJECT_SIZE);
                figures.put("write_gib_per_s", gibPerSecond(count * OBJECT_SIZE, t1 - t0));
                figures.put("read_gib_per_s", gibPerSecond(count * OBJECT_SIZE, t2 - t1));
                figures.put("spilled_after_write", afterWrite.spilledObjects());
                figures.put("spills", s.spillCount());
                figures.put("restores", s.restoreCount());
                depotRead = gibPerSecond(count * OBJECT_SIZE, t2 - t1);
            }
            Path plain = Files.createDirectories(root.resolve("plain"));
            ByteBuffer buf = ByteBuffer.allocateDirect((int) OBJECT_SIZE);
            long t0 = System.nanoTime();
            for (int i = 0; i < count; i++) {
                fill(MemorySegment.ofBuffer(buf), i);
                try (FileChannel ch = FileChannel.open(plain.resolve(i + ".bin"), StandardOpenOption.CREATE_NEW,
                    StandardOpenOption.WRITE)) {
                    buf.clear();
                    while (buf.hasRemaining()) {
                        ch.write(buf);
                    }
                }
            }
            long t1 = System.nanoTime();
            for (int i = 0; i < count; i++) {
                try (FileChannel ch = FileChannel.open(plain.resolve(i + ".bin"), StandardOpenOption.READ)) {
                    buf.clear();
                    while (buf.hasRemaining() && ch.read(buf) >= 0) {
                        // keep reading
                    }
                }
                verify(MemorySegment.ofBuffer(buf), i);
            }
            long t2 = System.nanoTime();
            baseline.put("kind", "the same bytes written to and read back from plain files in " + root);
            baseline.put("write_gib_per_s", gibPerSecond(count * OBJECT_SIZE, t1 - t0));
            baseline.put("read_gib_per_s", gibPerSecond(count * OBJECT_SIZE, t2 - t1));
            fileRead = gibPerSecond(count * OBJECT_SIZE, t2 - t1);
        } finally {
            BenchStore.deleteTree(root);
        }
        out.accept(new Result(name(), count + " x " + Units.size(OBJECT_SIZE) + " KEEP in " + Units.size(capacity),
            figures, baseline, depotRead / fileRead, "none (figures: spill/restore vs plain file I/O)", true));
    }

    private static ObjectId id(int i) {
        return ObjectId.of("depot-bench/spill/" + i);
    }

    private static double gibPerSecond(long bytes, long nanos) {
        return bytes / (double) Units.GIB / (nanos / 1e9);
    }

    private static void fill(MemorySegment s, int i) {
        long n = s.byteSize() / Long.BYTES;
        for (long k = 0; k < n; k++) {
            s.setAtIndex(ValueLayout.JAVA_LONG, k, k * 31 + i);
        }
    }

    private static void verify(MemorySegment s, int i) {
        long n = s.byteSize() / Long.BYTES;
        for (long k = 0; k < n; k++) {
            if (s.getAtIndex(ValueLayout.JAVA_LONG, k) != k * 31 + i) {
                throw new IllegalStateException("object " + i + " differs at long " + k + " after spill and restore");
            }
        }
    }

}
