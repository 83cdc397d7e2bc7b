package dev.depot.torture;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectView;
import dev.depot.client.ObjectWriter;
import dev.depot.errors.ObjectExistsException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * A worker of the overlapping-id workload: {@code DIR NAMES SECONDS SEED}. For {@code SECONDS} it puts, gets,
 * holds, releases and deletes ids from one namespace shared by every worker ({@code ov-0 .. ov-NAMES-1}), in
 * Java and Python, so that an id is deleted and put again while others still hold views of the old put. Every
 * view is checked against the stamp it was got with ({@link StampedPayload}) when got, again at random while
 * held, and before release. Prints {@code started}, one {@code CORRUPT ...} line per failed check (the first
 * few), and at the end {@code RESULT gets=G held=H checks=C failures=F}.
 */
public final class OverlapWorker {
    static final long[] SIZES = {0, 1, 100, 4096, 20_000, 65_536};
    static final int MAX_HELD = 8;
    private static final int REPORTED = 5;

    private record Held(ObjectView view, long stamp) {
    }

    private long gets;
    private long heldViews;
    private long checks;
    private long failures;

    private OverlapWorker() {
    }

    public static void main(String[] a) {
        Path dir = Path.of(a[0]);
        int names = Integer.parseInt(a[1]);
        long seconds = Long.parseLong(a[2]);
        SplittableRandom rnd = new SplittableRandom(Long.parseLong(a[3]));
        OverlapWorker w = new OverlapWorker();
        try (DepotClient depot = DepotClient.open(dir)) {
            System.out.println("started");
            w.loop(depot, names, seconds, rnd);
        } catch (RuntimeException e) {
            System.out.println("FAIL " + e);
            e.printStackTrace();
            System.exit(1);
        }
        System.out.println("RESULT gets=" + w.gets + " held=" + w.heldViews + " checks=" + w.checks
            + " failures=" + w.failures);
    }

    private void loop(DepotClient depot, int names, long seconds, SplittableRandom rnd) {
        List<Held> held = new ArrayList<>();
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        while (System.nanoTime() - end < 0) {
            ObjectId id = ObjectId.of("ov-" + rnd.nextInt(names));
            int op = rnd.nextInt(100);
            if (op < 30) {
                long stamp = rnd.nextLong();
                try (ObjectWriter w = depot.create(id, SIZES[rnd.nextInt(SIZES.length)], StampedPayload.metadata(stamp))) {
                    StampedPayload.fill(w.data(), id, stamp);
                    w.seal();
                } catch (ObjectExistsException e) {
                    // another worker put it first
                }
            } else if (op < 60) {
                ObjectView v = depot.tryGet(id, 0);
                if (v != null) {
                    gets++;
                    long stamp = StampedPayload.stampOf(v.metadata());
                    check(v, stamp);
                    if (held.size() < MAX_HELD && rnd.nextBoolean()) {
                        held.add(new Held(v, stamp));
                        heldViews++;
                    } else {
                        v.close();
                    }
                }
            } else if (op < 70) {
                if (!held.isEmpty()) {
                    Held h = held.get(rnd.nextInt(held.size()));
                    check(h.view(), h.stamp());
                }
            } else if (op < 82) {
                if (!held.isEmpty()) {
                    Held h = held.remove(rnd.nextInt(held.size()));
                    check(h.view(), h.stamp());
                    h.view().close();
                }
            } else {
                depot.delete(id);
            }
        }
        for (Held h : held) {
            check(h.view(), h.stamp());
            h.view().close();
        }
    }

    private void check(ObjectView v, long stamp) {
        checks++;
        String bad = StampedPayload.verify(v.data(), v.id(), stamp);
        if (bad == null && StampedPayload.stampOf(v.metadata()) != stamp) {
            bad = "object " + v.id() + ": its metadata changed under a held view";
        }
        if (bad != null) {
            if (failures++ < REPORTED) {
                System.out.println("CORRUPT java: " + bad);
            }
        }
    }
}
