package dev.depot.torture;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectView;
import dev.depot.client.ObjectWriter;
import dev.depot.errors.ObjectExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * A soak client: {@code DIR SLOT SECONDS}. Mixed load (70% get+verify, 20% put, 10% delete) over a bounded
 * namespace, printing once a second {@code stat ops=N get_p99_us=X put_p99_us=Y rss_kb=Z}, and {@code done}
 * at the end (or {@code CORRUPT ...}).
 */
public final class SoakWorker {
    private static final int NAMES = 200;
    private static final long[] SIZES = {64, 1024, 16 * 1024, 256 * 1024};

    private SoakWorker() {
    }

    public static void main(String[] a) throws Exception {
        Path dir = Path.of(a[0]);
        int slot = Integer.parseInt(a[1]);
        long end = System.nanoTime() + Long.parseLong(a[2]) * 1_000_000_000L;
        SplittableRandom rnd = new SplittableRandom(slot);
        long[] getNanos = new long[1 << 20];
        long[] putNanos = new long[1 << 18];
        try (DepotClient depot = DepotClient.open(dir)) {
            long nextReport = System.nanoTime() + 1_000_000_000L;
            int gets = 0;
            int puts = 0;
            long ops = 0;
            while (System.nanoTime() < end) {
                int name = rnd.nextInt(NAMES);
                long size = SIZES[name % SIZES.length];
                ObjectId id = ObjectId.of("soak" + (name % 2 == 0 ? "" : slot) + "-" + name);
                int op = rnd.nextInt(10);
                long t0 = System.nanoTime();
                if (op < 7) {
                    try (ObjectView v = depot.tryGet(id, 0)) {
                        if (v != null && (rnd.nextInt(64) == 0) && Payload.verify(v.data(), id) != null) {
                            System.out.println("CORRUPT " + Payload.verify(v.data(), id));
                            System.exit(3);
                        }
                    }
                    if (gets < getNanos.length) {
                        getNanos[gets++] = System.nanoTime() - t0;
                    }
                } else if (op < 9) {
                    try (ObjectWriter w = depot.create(id, size)) {
                        Payload.fill(w.data(), id);
                        w.seal();
                    } catch (ObjectExistsException e) {
                        // someone else made it
                    }
                    if (puts < putNanos.length) {
                        putNanos[puts++] = System.nanoTime() - t0;
                    }
                } else {
                    depot.delete(id);
                }
                ops++;
                if (System.nanoTime() >= nextReport) {
                    System.out.println("stat ops=" + ops + " get_p99_us=" + p99(getNanos, gets) + " put_p99_us="
                        + p99(putNanos, puts) + " rss_kb=" + rssKb());
                    gets = 0;
                    puts = 0;
                    ops = 0;
                    nextReport += 1_000_000_000L;
                }
            }
        }
        System.out.println("done");
    }

    static double p99(long[] nanos, int n) {
        if (n == 0) {
            return 0;
        }
        long[] c = Arrays.copyOf(nanos, n);
        Arrays.sort(c);
        return c[(int) Math.min(n - 1, Math.ceil(n * 0.99) - 1)] / 1000.0;
    }

    /**
     * Private resident memory of this process in KiB ({@code RssAnon} of /proc/self/status): what a leak would
     * grow. Pages of the store that the process touched are shared memory ({@code RssShmem}), counted apart.
     */
    static long rssKb() {
        return rssKb("self");
    }

    static long rssKb(String pid) {
        return statusKb(pid, "RssAnon:");
    }

    /** Shared-memory pages (the store's) resident in this process, in KiB. */
    static long shmemKb(String pid) {
        return statusKb(pid, "RssShmem:");
    }

    private static long statusKb(String pid, String field) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc", pid, "status"))) {
                if (line.startsWith(field)) {
                    return Long.parseLong(line.replaceAll("[^0-9]", ""));
                }
            }
        } catch (Exception e) {
            return -1;
        }
        return -1;
    }
}
