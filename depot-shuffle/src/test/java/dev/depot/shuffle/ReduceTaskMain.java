package dev.depot.shuffle;

import dev.depot.client.DepotClient;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;

/**
 * A reduce task in a child JVM: {@code DIR SHUFFLE SEED exit|hold PARTITION...}. Checks every slice of each
 * partition against what {@link MapTaskMain} writes and prints {@code ok P BYTES} (or {@code bad ...});
 * {@code hold} then prints {@code holding} with every reader still open and waits to be killed.
 */
public final class ReduceTaskMain {
    private ReduceTaskMain() {
    }

    public static void main(String[] args) throws InterruptedException {
        long seed = Long.parseLong(args[2]);
        boolean hold = args[3].equals("hold");
        try (DepotClient client = DepotClient.open(Path.of(args[0]));
             Shuffle s = Shuffle.open(client, args[1], 10_000)) {
            for (int a = 4; a < args.length; a++) {
                int p = Integer.parseInt(args[a]);
                ShuffleReader r = s.reader(p, 60_000);
                String verdict = "ok";
                for (int m = 0; m < s.maps(); m++) {
                    MemorySegment slice = r.slice(m);
                    long expected = MapTaskMain.sizes(seed, m, s.partitions())[p];
                    if (slice.byteSize() != expected) {
                        verdict = "bad map " + m + " size " + slice.byteSize() + " expected " + expected;
                    }
                    for (long i = 0; i < slice.byteSize(); i++) {
                        if (slice.get(ValueLayout.JAVA_BYTE, i) != ShuffleTest.content(m, p, i)) {
                            verdict = "bad map " + m + " byte " + i;
                            break;
                        }
                    }
                }
                System.out.println(verdict.equals("ok") ? "ok " + p + " " + r.byteSize() : verdict);
                if (!hold) {
                    r.close();
                }
            }
            if (hold) {
                System.out.println("holding");
                Thread.sleep(Long.MAX_VALUE);
            }
        }
    }
}
