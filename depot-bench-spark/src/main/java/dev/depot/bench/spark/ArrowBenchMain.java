package dev.depot.bench.spark;

import dev.depot.arrow.DepotArrow;
import dev.depot.arrow.DepotArrowReader;
import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectView;
import java.io.FileInputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamReader;

/**
 * Java Arrow in a JVM of its own: writes 1 GiB float64 batch (and smaller ones) into Depot and the same Arrow IPC
 * stream into a file, then times open + sum from Depot against {@code ArrowStreamReader} on the file (page cache
 * warm), and open alone for each size (zero-copy: flat in the size).
 */
public final class ArrowBenchMain {
    static final int OPEN_WARMUP = 2000;
    static final int OPEN_REPS = 200;

    private ArrowBenchMain() {
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        Path file = Path.of(args[1], "batch.arrows");
        boolean quick = args[2].equals("--quick");
        long[] sizes = quick ? new long[] {16L << 20, 64L << 20} : new long[] {64L << 20, 256L << 20, 1L << 30};
        try (DepotClient depot = DepotClient.open(dir); BufferAllocator allocator = new RootAllocator()) {
            double firstOpenUs = 0;
            for (long size : sizes) {
                ObjectId id = ObjectId.of("bench/arrow-" + size);
                int n = (int) (size / Double.BYTES);
                try (VectorSchemaRoot root = VectorSchemaRoot.create(new org.apache.arrow.vector.types.pojo.Schema(
                    java.util.List.of(org.apache.arrow.vector.types.pojo.Field.notNullable("x",
                        new org.apache.arrow.vector.types.pojo.ArrowType.FloatingPoint(
                            org.apache.arrow.vector.types.FloatingPointPrecision.DOUBLE)))), allocator)) {
                    Float8Vector x = (Float8Vector) root.getVector(0);
                    x.allocateNew(n);
                    for (int i = 0; i < n; i++) {
                        x.set(i, i);
                    }
                    root.setRowCount(n);
                    DepotArrow.put(depot, id, root);
                }
                double[] open = openMicros(depot, id, allocator);
                double openUs = open[0];
                if (firstOpenUs == 0) {
                    firstOpenUs = openUs;
                }
                System.out.println("arrow open of " + (size >> 20) + " MiB: best " + String.format("%.1f", openUs)
                    + " us, median " + String.format("%.1f", open[1]) + " us (of " + OPEN_REPS + ", after "
                    + OPEN_WARMUP + " warm-up opens)");
                if (size == sizes[sizes.length - 1]) {
                    try (ObjectView v = depot.get(id, 0); FileChannel out = FileChannel.open(file,
                        StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
                        java.nio.ByteBuffer bb = v.asByteBuffer();
                        while (bb.hasRemaining()) {
                            out.write(bb);
                        }
                    }
                    double depotMs = SparkBenchMain.bestMillis(() -> {
                        try (DepotArrowReader r = DepotArrow.open(depot, id, allocator);
                             VectorSchemaRoot b = r.next()) {
                            return sum((Float8Vector) b.getVector(0));
                        }
                    });
                    double fileMs = SparkBenchMain.bestMillis(() -> {
                        try (FileInputStream in = new FileInputStream(file.toFile());
                             ArrowStreamReader reader = new ArrowStreamReader(Channels.newChannel(in), allocator)) {
                            reader.loadNextBatch();
                            return sum((Float8Vector) reader.getVectorSchemaRoot().getVector(0));
                        } catch (java.io.IOException e) {
                            throw new java.io.UncheckedIOException(e);
                        }
                    });
                    SparkBenchMain.result("Java Arrow open + sum of " + (size >> 20) + " MiB", depotMs,
                        "arrow-ipc-file", fileMs, 5);
                    SparkBenchMain.result("Java Arrow open of " + (size >> 20) + " MiB vs " + (sizes[0] >> 20)
                        + " MiB (flat)", openUs / 1000, "open-smallest", firstOpenUs / 1000, 0.25);
                }
                depot.delete(id);
            }
        } finally {
            Files.deleteIfExists(file);
        }
    }

    /**
     * Open + first batch + close of {@code id}: {@link #OPEN_WARMUP} times unmeasured (so that the open path is
     * compiled, not interpreted: a best of 3 cold opens measured the JIT and the machine's load, not the size),
     * then best and median of {@link #OPEN_REPS}, in microseconds.
     */
    private static double[] openMicros(DepotClient depot, ObjectId id, BufferAllocator allocator) {
        long[] times = new long[OPEN_REPS];
        for (int i = -OPEN_WARMUP; i < OPEN_REPS; i++) {
            long t = System.nanoTime();
            try (DepotArrowReader r = DepotArrow.open(depot, id, allocator); VectorSchemaRoot b = r.next()) {
                if (b.getRowCount() == 0) {
                    throw new IllegalStateException("empty batch");
                }
            }
            if (i >= 0) {
                times[i] = System.nanoTime() - t;
            }
        }
        java.util.Arrays.sort(times);
        return new double[] {times[0] / 1e3, times[OPEN_REPS / 2] / 1e3};
    }

    private static double sum(Float8Vector v) {
        double s = 0;
        int n = v.getValueCount();
        for (int i = 0; i < n; i++) {
            s += v.get(i);
        }
        return s;
    }
}
