import dev.depot.client.ArrayMetadata;
import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectView;
import dev.depot.client.ObjectWriter;
import java.lang.foreign.ValueLayout;

/** Writes a 3 x 4 float64 matrix that Python reads as a NumPy array, then reads the array Python writes back. */
public class ArraysWithPython {
    public static void main(String[] args) throws Exception {
        try (DepotClient depot = DepotClient.open()) { // $DEPOT_DIR, else /dev/shm/depot-$USER
            ArrayMetadata matrix = ArrayMetadata.of(ArrayMetadata.FLOAT64, 3, 4);
            try (ObjectWriter w = depot.create(ObjectId.of("from-java"), matrix.byteSize(), matrix.encode())) {
                for (int i = 0; i < 12; i++) {
                    w.data().setAtIndex(ValueLayout.JAVA_DOUBLE, i, i); // C order: row-major
                }
                w.seal();
            }
            try (ObjectView v = depot.get(ObjectId.of("from-python"), 30_000)) { // waits for Python's put
                ArrayMetadata a = ArrayMetadata.decode(v.metadata());
                long sum = 0;
                for (long i = 0; i < a.elementCount(); i++) {
                    sum += v.data().getAtIndex(ValueLayout.JAVA_INT, i); // "<i4": little-endian int32
                }
                System.out.println(a.dtype() + " " + java.util.Arrays.toString(a.shape()) + " sum " + sum);
            }
        }
    }
}
