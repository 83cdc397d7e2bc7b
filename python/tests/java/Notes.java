import dev.depot.client.DepotClient;
import dev.depot.client.ObjectEvent;
import dev.depot.client.ObjectId;
import dev.depot.client.Subscription;
import java.nio.file.Path;

/**
 * Run by python/tests/test_notifications.py (java's source launcher). {@code seal DIR NAME SIZE}: puts the object
 * NAME of SIZE bytes in this process (no daemon on the way) and prints {@code sealed}. {@code watch DIR COUNT}:
 * subscribes, prints {@code subscribed}, then one line per event "TYPE id-hex data-size pid" for COUNT events.
 */
public class Notes {
    public static void main(String[] args) throws Exception {
        try (DepotClient client = DepotClient.open(Path.of(args[1]))) {
            if (args[0].equals("seal")) {
                client.put(ObjectId.of(args[2]), new byte[Integer.parseInt(args[3])]);
                System.out.println("sealed");
                return;
            }
            try (Subscription events = client.subscribe()) {
                System.out.println("subscribed");
                System.out.flush();
                for (int i = 0; i < Integer.parseInt(args[2]); i++) {
                    ObjectEvent e = events.next(60_000);
                    System.out.println(e == null ? "none" : e.type() + " " + (e.id() == null ? "-" : e.id().toHex())
                        + " " + e.dataSize() + " " + e.publisherPid());
                    System.out.flush();
                }
            }
        }
    }
}
