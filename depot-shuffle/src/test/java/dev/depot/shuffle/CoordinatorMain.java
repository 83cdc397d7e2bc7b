package dev.depot.shuffle;

import dev.depot.client.DepotClient;
import java.nio.file.Path;

/**
 * A coordinator in a child JVM that dies without closing its shuffle: {@code DIR ID MAPS PARTITIONS} creates
 * a shuffle of plain bytes, prints {@code created} and waits to be killed.
 */
public final class CoordinatorMain {
    private CoordinatorMain() {
    }

    public static void main(String[] args) throws InterruptedException {
        DepotClient client = DepotClient.open(Path.of(args[0]));
        Shuffle.create(client, args[1], Integer.parseInt(args[2]), Integer.parseInt(args[3]));
        System.out.println("created");
        Thread.sleep(Long.MAX_VALUE);
    }
}
