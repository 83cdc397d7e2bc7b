package dev.depot.torture;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectView;
import dev.depot.client.ObjectWriter;
import dev.depot.errors.ObjectExistsException;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.SplittableRandom;

/**
 * A torture client: {@code DIR SLOT SEED PERMANENT}. Loops forever over random create / write / seal / abort /
 * get+verify / hold / release / delete on its own namespace ({@code w<SLOT>-n}, which its replacement after a
 * kill inherits) and reads the driver's permanent objects. Prints {@code CORRUPT ...} and exits 3 when any
 * object it reads does not verify. It is meant to be killed with SIGKILL at a random instruction.
 */
public final class TortureWorker {
    static final int NAMES = 40;
    static final long[] SIZES = {0, 1, 100, 4096, 65_536, 256 * 1024};

    private TortureWorker() {
    }

    public static void main(String[] a) {
        Path dir = Path.of(a[0]);
        int slot = Integer.parseInt(a[1]);
        SplittableRandom rnd = new SplittableRandom(Long.parseLong(a[2]));
        int permanent = Integer.parseInt(a[3]);
        ArrayDeque<ObjectView> held = new ArrayDeque<>();
        ObjectWriter pending = null;
        try (DepotClient depot = DepotClient.open(dir)) {
            System.out.println("started");
            while (true) {
                int op = rnd.nextInt(100);
                if (op < 30) {
                    ObjectId id = ObjectId.of("w" + slot + "-" + rnd.nextInt(NAMES));
                    long size = SIZES[rnd.nextInt(SIZES.length)];
                    try {
                        ObjectWriter w = depot.create(id, size);
                        Payload.fill(w.data(), id);
                        int fate = rnd.nextInt(10);
                        if (fate < 8) {
                            w.seal();
                        } else if (fate == 8) {
                            w.abort();
                        } else if (pending == null) {
                            pending = w;
                        } else {
                            w.seal();
                        }
                    } catch (ObjectExistsException e) {
                        // sealed earlier (maybe by the worker this one replaced)
                    }
                } else if (op < 60) {
                    ObjectId id = rnd.nextInt(3) == 0 ? ObjectId.of("perm-" + rnd.nextInt(permanent))
                        : ObjectId.of("w" + slot + "-" + rnd.nextInt(NAMES));
                    ObjectView v = depot.tryGet(id, 0);
                    if (v != null) {
                        check(v);
                        if (held.size() < 8 && rnd.nextBoolean()) {
                            held.add(v);
                        } else {
                            v.close();
                        }
                    }
                } else if (op < 75) {
                    if (!held.isEmpty()) {
                        ObjectView v = held.poll();
                        check(v);
                        v.close();
                    }
                } else if (op < 90) {
                    depot.delete(ObjectId.of("w" + slot + "-" + rnd.nextInt(NAMES)));
                } else if (pending != null) {
                    if (rnd.nextBoolean()) {
                        pending.seal();
                    } else {
                        pending.abort();
                    }
                    pending = null;
                }
            }
        } catch (RuntimeException e) {
            System.out.println("FAIL " + e);
            e.printStackTrace();
            System.exit(1);
        }
    }

    private static void check(ObjectView v) {
        String bad = Payload.verify(v.data(), v.id());
        if (bad != null) {
            System.out.println("CORRUPT " + bad);
            System.exit(3);
        }
    }
}
