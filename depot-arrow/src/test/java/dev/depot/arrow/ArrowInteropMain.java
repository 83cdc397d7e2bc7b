package dev.depot.arrow;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectView;
import java.nio.file.Path;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * A child JVM for interop tests (Python, other JVMs). {@code put DIR NAME ROWS BATCHES} writes
 * {@link ArrowTestData} batches and prints {@code put SIZE}; {@code check DIR NAME ROWS} reads the object, checks
 * the rows, that every data buffer lies in the object's memory and that the pin goes with the last buffer, and
 * prints {@code checked BATCHES SUM}. A failed check exits non-zero.
 */
public final class ArrowInteropMain {
    private ArrowInteropMain() {
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[1]);
        ObjectId id = ObjectId.of(args[2]);
        int rows = Integer.parseInt(args[3]);
        try (DepotClient depot = DepotClient.open(dir); BufferAllocator allocator = new RootAllocator()) {
            switch (args[0]) {
                case "put" -> {
                    int batches = Integer.parseInt(args[4]);
                    VectorSchemaRoot[] roots = new VectorSchemaRoot[batches];
                    for (int b = 0; b < batches; b++) {
                        roots[b] = ArrowTestData.batch(allocator, (long) b * rows, rows);
                    }
                    long size = DepotArrow.put(depot, id, roots);
                    for (VectorSchemaRoot r : roots) {
                        r.close();
                    }
                    System.out.println("put " + size);
                }
                case "check" -> System.out.println("checked " + check(depot, id, rows, allocator));
                default -> throw new IllegalArgumentException("unknown command " + args[0]);
            }
        }
    }

    private static String check(DepotClient depot, ObjectId id, int rows, BufferAllocator allocator) {
        long start;
        long end;
        try (ObjectView v = depot.get(id, 10_000)) {
            start = v.data().address();
            end = start + v.size();
        }
        long sum = 0;
        int batches;
        try (DepotArrowReader reader = DepotArrow.open(depot, id, allocator)) {
            batches = reader.batchCount();
            for (int b = 0; b < batches; b++) {
                try (VectorSchemaRoot root = reader.batch(b)) {
                    sum += ArrowTestData.check(root, (long) b * rows, rows);
                    for (FieldVector vector : root.getFieldVectors()) {
                        ArrowBuf data = vector.getDataBuffer();
                        if (data.memoryAddress() < start || data.memoryAddress() + data.capacity() > end) {
                            throw new AssertionError(vector.getName() + " was copied out of the object");
                        }
                    }
                }
            }
        }
        int pins = depot.list().stream().filter(i -> i.id().equals(id)).findFirst().orElseThrow().pinCount();
        if (pins != 0 || allocator.getAllocatedMemory() != 0) {
            throw new AssertionError("after closing: " + pins + " pins, " + allocator.getAllocatedMemory() + " bytes");
        }
        return batches + " " + sum;
    }
}
