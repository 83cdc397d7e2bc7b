package dev.depot.spark.bench;

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
                double openUs = SparkBenchMain.bestMillis(() -> {
                    try (DepotArrowReader r = DepotArrow.open(depot, id, allocator);
                         VectorSchemaRoot b = r.next()) {
                        return b.getRowCount();
                    }
                }) * 1000;
                if (firstOpenUs == 0) {
                    firstOpenUs = openUs;
                }
                System.out.println("arrow open of " + (size >> 20) + " MiB: " + String.format("%.1f", openUs) + " us");
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

    private static double sum(Float8Vector v) {
        double s = 0;
        int n = v.getValueCount();
        for (int i = 0; i < n; i++) {
            s += v.get(i);
        }
        return s;
    }
}
