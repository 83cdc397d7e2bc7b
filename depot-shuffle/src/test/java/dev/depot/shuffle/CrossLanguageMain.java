package dev.depot.shuffle;

import dev.depot.client.DepotClient;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The Java side of python/tests/test_shuffle.py's cross-language tests, in a child JVM:
 * <ul>
 * <li>{@code create DIR ID MAPS PARTITIONS LAYOUT DONE_FILE}: creates a float64 shuffle (this process owns it),
 *     prints {@code created}, waits (up to 2 minutes) for DONE_FILE to exist, closes the shuffle (deleting it)
 *     and prints {@code closed}.</li>
 * <li>{@code write DIR ID MAP}: writes map MAP: slice p holds {@code p + 1} values, value i being
 *     {@code MAP * 1000 + p * 10 + i}; prints {@code committed}.</li>
 * <li>{@code read DIR ID PARTITION}: prints {@code partition P} and then, per map, {@code values v1 v2 ...}.</li>
 * <li>{@code sweep DIR}: sweeps abandoned shuffles and prints {@code swept} and their ids.</li>
 * </ul>
 */
public final class CrossLanguageMain {
    private CrossLanguageMain() {
    }

    public static void main(String[] args) throws Exception {
        try (DepotClient client = DepotClient.open(Path.of(args[1]))) {
            switch (args[0]) {
                case "create" -> {
                    Shuffle s = Shuffle.create(client, args[2], Integer.parseInt(args[3]), Integer.parseInt(args[4]),
                        Shuffle.Options.defaults().withDtype("<f8").withLayout(Shuffle.Layout.valueOf(args[5])));
                    System.out.println("created");
                    Path done = Path.of(args[6]);
                    long deadline = System.nanoTime() + 120_000_000_000L;
                    while (!java.nio.file.Files.exists(done) && System.nanoTime() - deadline < 0) {
                        Thread.sleep(20);
                    }
                    s.close();
                    System.out.println("closed");
                }
                case "write" -> {
                    int map = Integer.parseInt(args[3]);
                    try (Shuffle s = Shuffle.open(client, args[2], 10_000)) {
                        List<MemorySegment> slices = new ArrayList<>();
                        for (int p = 0; p < s.partitions(); p++) {
                            double[] v = new double[p + 1];
                            for (int i = 0; i < v.length; i++) {
                                v[i] = map * 1000 + p * 10 + i;
                            }
                            slices.add(MemorySegment.ofArray(v));
                        }
                        s.writeMap(map, slices);
                    }
                    System.out.println("committed");
                }
                case "read" -> {
                    int partition = Integer.parseInt(args[3]);
                    try (Shuffle s = Shuffle.open(client, args[2], 10_000);
                         ShuffleReader r = s.reader(partition, 30_000)) {
                        StringBuilder sb = new StringBuilder("partition " + partition);
                        for (MemorySegment slice : r.slices()) {
                            sb.append("\nvalues");
                            for (double d : slice.toArray(ValueLayout.JAVA_DOUBLE)) {
                                sb.append(' ').append(d);
                            }
                        }
                        System.out.println(sb);
                    }
                }
                case "sweep" -> System.out.println(("swept " + String.join(" ",
                    Shuffle.sweepAbandoned(client).stream().map(AbandonedShuffle::id).toList())).strip());
                default -> throw new IllegalArgumentException(args[0]);
            }
        }
    }
}
