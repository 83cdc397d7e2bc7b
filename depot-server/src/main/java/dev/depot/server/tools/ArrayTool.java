package dev.depot.server.tools;

import dev.depot.client.ArrayMetadata;
import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectView;
import dev.depot.client.ObjectWriter;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Writes and checks arrays in the shared array convention ({@link ArrayMetadata}), so tests can pass arrays
 * between Java and Python through a running daemon's store:
 * <ul>
 *   <li>{@code ArrayTool put DIR NAME ROWS COLS}: a {@code <f8} array of shape (ROWS, COLS) whose element i (in
 *       C order) is {@code i * 0.5}, under {@code ObjectId.of(NAME)}; prints {@code put NAME}.</li>
 *   <li>{@code ArrayTool check DIR NAME}: expects a {@code <i4} array whose element i is {@code i}; prints
 *       {@code ok DTYPE SHAPE} and exits 0, or prints why not and exits 1.</li>
 * </ul>
 */
public final class ArrayTool {
    private static final ValueLayout.OfDouble F8 = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt I4 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private ArrayTool() {
    }

    public static void main(String[] args) {
        if (args.length < 3) {
            System.err.println("usage: ArrayTool put DIR NAME ROWS COLS | check DIR NAME");
            System.exit(2);
        }
        try (DepotClient depot = DepotClient.open(Path.of(args[1]))) {
            ObjectId id = ObjectId.of(args[2]);
            int status = switch (args[0]) {
                case "put" -> put(depot, id, Long.parseLong(args[3]), Long.parseLong(args[4]), args[2]);
                case "check" -> check(depot, id);
                default -> 2;
            };
            System.out.flush();
            System.exit(status);
        }
    }

    private static int put(DepotClient depot, ObjectId id, long rows, long cols, String name) {
        ArrayMetadata m = ArrayMetadata.of(ArrayMetadata.FLOAT64, rows, cols);
        try (ObjectWriter w = depot.create(id, m.byteSize(), m.encode())) {
            MemorySegment data = w.data();
            for (long i = 0; i < m.elementCount(); i++) {
                data.setAtIndex(F8, i, i * 0.5);
            }
            w.seal();
        }
        System.out.println("put " + name);
        return 0;
    }

    private static int check(DepotClient depot, ObjectId id) {
        try (ObjectView v = depot.get(id, 10_000)) {
            ArrayMetadata m = ArrayMetadata.decode(v.metadata());
            if (!m.dtype().equals(ArrayMetadata.INT32) || m.byteSize() != v.size()) {
                System.out.println("wrong array: " + m + " with " + v.size() + " bytes of data");
                return 1;
            }
            for (long i = 0; i < m.elementCount(); i++) {
                int got = v.data().getAtIndex(I4, i);
                if (got != i) {
                    System.out.println("element " + i + " is " + got);
                    return 1;
                }
            }
            System.out.println("ok " + m.dtype() + " " + Arrays.toString(m.shape()));
            return 0;
        }
    }
}
