package dev.depot.shuffle;

import dev.depot.client.DepotClient;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.SplittableRandom;

/**
 * A map task in a child JVM: {@code DIR SHUFFLE MAP SEED commit|hang|large}. Writes map MAP's slices with sizes drawn
 * from SEED ({@link #sizes}) and contents {@link ShuffleTest#content}; {@code hang} opens the writer, prints
 * {@code opened} and waits to be killed; {@code large} writes {@link LargePartitionTest}'s map.
 */
public final class MapTaskMain {
    private MapTaskMain() {
    }

    static long[] sizes(long seed, int map, int partitions) {
        return ShuffleTest.randomSizes(new SplittableRandom(seed * 1000 + map), partitions);
    }

    public static void main(String[] args) throws InterruptedException {
        int map = Integer.parseInt(args[2]);
        long seed = Long.parseLong(args[3]);
        try (DepotClient client = DepotClient.open(Path.of(args[0]));
             Shuffle s = Shuffle.open(client, args[1], 10_000)) {
            if (args[4].equals("large")) {
                LargePartitionTest.writeLargeMap(s, map);
                System.out.println("committed");
                return;
            }
            long[] sizes = sizes(seed, map, s.partitions());
            ShuffleWriter w = s.writer(map, sizes);
            if (args[4].equals("hang")) {
                System.out.println("opened");
                Thread.sleep(Long.MAX_VALUE);
            }
            for (int p = 0; p < sizes.length; p++) {
                MemorySegment seg = w.partition(p);
                for (long i = 0; i < sizes[p]; i++) {
                    seg.set(ValueLayout.JAVA_BYTE, i, ShuffleTest.content(map, p, i));
                }
            }
            w.commit();
            System.out.println("committed");
        }
    }
}
