import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectView;
import dev.depot.client.PickledObject;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;

/**
 * Run by python/tests/test_pickling_java.py (java's source launcher): prints, for each object named on the
 * command line, one line per buffer: "name index kind length sum-of-bytes first-double".
 */
public class ReadPickled {
    public static void main(String[] args) throws Exception {
        try (DepotClient client = DepotClient.open(Path.of(args[0]))) {
            for (int a = 1; a < args.length; a++) {
                try (ObjectView view = client.get(ObjectId.of(args[a]), 5000)) {
                    PickledObject o = PickledObject.of(view);
                    System.out.println(args[a] + " stream " + o.stream().byteSize());
                    for (int i = 0; i < o.bufferCount(); i++) {
                        MemorySegment b = o.buffer(i);
                        long sum = 0;
                        for (long j = 0; j < b.byteSize(); j++) {
                            sum += Byte.toUnsignedInt(b.get(ValueLayout.JAVA_BYTE, j));
                        }
                        String first = b.byteSize() >= 8 ? String.valueOf(b.get(ValueLayout.JAVA_DOUBLE_UNALIGNED, 0)) : "-";
                        System.out.println(args[a] + " " + i + " " + o.kind(i) + " " + b.byteSize() + " " + sum + " "
                            + first + " " + (b.address() % PickledObject.BUFFER_ALIGNMENT));
                    }
                }
            }
        }
    }
}
