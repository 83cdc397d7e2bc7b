import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.core.store.Doctor;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Run by python/tests/test_local_writes.py (java's source launcher). {@code check DIR}: examines the store as
 * {@code depot doctor --check} does and prints one {@code found: ...} line per problem, then {@code healthy} or
 * {@code unhealthy}. {@code churn DIR PREFIX COUNT SEED}: in this process (the allocator lock shared with Python's
 * creates), COUNT random puts of 1 B..64 KiB named PREFIX-i and deletes of earlier ones, then prints {@code done}.
 */
public class Heap {
    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[1]);
        if (args[0].equals("check")) {
            Doctor.Report report = Doctor.examine(dir, false);
            report.findings().forEach(f -> System.out.println("found: " + f));
            System.out.println(report.healthy() ? "healthy" : "unhealthy");
            return;
        }
        Random random = new Random(Long.parseLong(args[4]));
        try (DepotClient client = DepotClient.open(dir)) {
            List<ObjectId> live = new ArrayList<>();
            for (int i = 0; i < Integer.parseInt(args[3]); i++) {
                if (!live.isEmpty() && random.nextInt(3) == 0) {
                    client.delete(live.remove(random.nextInt(live.size())));
                    continue;
                }
                ObjectId id = ObjectId.of(args[2] + "-" + i);
                client.put(id, new byte[1 + random.nextInt(64 << 10)]);
                live.add(id);
            }
        }
        System.out.println("done");
    }
}
