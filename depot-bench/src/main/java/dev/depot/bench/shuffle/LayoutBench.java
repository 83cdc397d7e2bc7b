package dev.depot.bench.shuffle;

import dev.depot.client.DepotClient;
import dev.depot.server.DepotServer;
import dev.depot.server.ServerConfig;
import dev.depot.shuffle.Shuffle;
import dev.depot.shuffle.ShuffleReader;
import dev.depot.shuffle.ShuffleWriter;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Locale;
import java.util.UUID;
import java.util.stream.Stream;

/**
 * Measures the two {@link Shuffle.Layout}s against each other: for M maps x P partitions moving {@code --mib} MiB
 * in all, the median time to write every map (open, fill, commit) and to read every partition (open, sum every
 * word of every slice, close), in one process. The figures behind the default layout ({@code docs/DESIGN.md}, "Shuffles").
 *
 * <pre>  java -cp ... dev.depot.bench.shuffle.LayoutBench [--mib 256] [--repeats 5]</pre>
 */
public final class LayoutBench {
    private LayoutBench() {
    }

    public static void main(String[] args) throws Exception {
        long mib = 256;
        int repeats = 5;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--mib" -> mib = Long.parseLong(args[++i]);
                case "--repeats" -> repeats = Integer.parseInt(args[++i]);
                default -> throw new IllegalArgumentException("usage: LayoutBench [--mib N] [--repeats N]");
            }
        }
        Path dir = Path.of("/dev/shm", "depot-bench-layout-" + UUID.randomUUID());
        try (DepotServer server = DepotServer.start(ServerConfig.defaults().withDirectory(dir)
                .withCapacity((mib << 20) * 2 + (256L << 20)).withControlSocket(false), m -> { })) {
            DepotClient client = server.client();
            System.out.printf(Locale.ROOT, "%-10s %-10s %12s %12s %12s%n", "maps x P", "layout", "write ms", "read ms",
                "objects");
            int[] shapes = {2, 8, 32, 128};
            for (int n : shapes) {
                for (Shuffle.Layout layout : Shuffle.Layout.values()) {
                    double[] write = new double[repeats];
                    double[] read = new double[repeats];
                    long objects = 0;
                    for (int r = 0; r < repeats + 1; r++) {
                        long[] t = once(client, "b" + n + layout + r, n, n, (mib << 20), layout);
                        if (r > 0) {  // the first round warms up
                            write[r - 1] = t[0] / 1e6;
                            read[r - 1] = t[1] / 1e6;
                            objects = t[2];
                        }
                    }
                    Arrays.sort(write);
                    Arrays.sort(read);
                    System.out.printf(Locale.ROOT, "%-10s %-10s %12.2f %12.2f %12d%n", n + "x" + n, layout,
                        write[repeats / 2], read[repeats / 2], objects);
                }
            }
        } finally {
            try (Stream<Path> s = Files.walk(dir)) {
                for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    /** Returns {write ns, read ns, objects in the store at the end of writing}. */
    private static long[] once(DepotClient client, String id, int maps, int partitions, long bytes, Shuffle.Layout layout) {
        long slice = bytes / maps / partitions / Long.BYTES * Long.BYTES;
        long[] sizes = new long[partitions];
        Arrays.fill(sizes, slice);
        long sink = 0;
        try (Shuffle s = Shuffle.create(client, id, maps, partitions, Shuffle.Options.defaults().withLayout(layout))) {
            long t0 = System.nanoTime();
            for (int m = 0; m < maps; m++) {
                try (ShuffleWriter w = s.writer(m, sizes)) {
                    for (int p = 0; p < partitions; p++) {
                        w.partition(p).fill((byte) p);
                    }
                    w.commit();
                }
            }
            long t1 = System.nanoTime();
            long objects = client.list().size();
            long t2 = System.nanoTime();
            for (int p = 0; p < partitions; p++) {
                try (ShuffleReader r = s.reader(p, 0)) {
                    for (MemorySegment seg : r.slices()) {
                        long n = seg.byteSize() / Long.BYTES;
                        for (long i = 0; i < n; i++) {
                            sink += seg.getAtIndex(ValueLayout.JAVA_LONG, i);
                        }
                    }
                }
            }
            long t3 = System.nanoTime();
            if (sink == 42) {
                System.out.print("");
            }
            return new long[] {t1 - t0, t3 - t2, objects};
        }
    }
}
