package dev.depot.cli;

import dev.depot.client.DepotClient;
import dev.depot.shuffle.Shuffle;
import java.nio.file.Path;

/** A shuffle coordinator in a child JVM that dies without closing: {@code DIR ID}; prints "created", waits. */
public final class AbandonedShuffleMain {
    private AbandonedShuffleMain() {
    }

    public static void main(String[] args) throws InterruptedException {
        DepotClient client = DepotClient.open(Path.of(args[0]));
        Shuffle s = Shuffle.create(client, args[1], 2, 2);
        s.writeMap(0, java.util.List.of(java.lang.foreign.MemorySegment.ofArray(new byte[] {1, 2}),
            java.lang.foreign.MemorySegment.ofArray(new byte[] {3})));
        System.out.println("created");
        Thread.sleep(Long.MAX_VALUE);
    }
}
