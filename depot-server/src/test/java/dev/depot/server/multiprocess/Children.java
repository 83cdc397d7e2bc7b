package dev.depot.server.multiprocess;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectView;
import dev.depot.client.ObjectWriter;
import dev.depot.errors.ObjectExistsException;
import dev.depot.server.DepotServer;
import dev.depot.server.ServerConfig;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Main classes run in child JVMs by the multi-process tests. Each prints a line when it reaches the point the
 * test waits for; the long-lived ones then sleep until they are killed.
 */
final class Children {
    private Children() {
    }

    static void sleepForever() throws InterruptedException {
        Thread.sleep(Long.MAX_VALUE);
    }

    /** {@code DIR PREFIX COUNT SIZE}: puts COUNT objects PREFIX-i of SIZE bytes. */
    static final class Producer {
        public static void main(String[] a) {
            int count = Integer.parseInt(a[2]);
            long size = Long.parseLong(a[3]);
            try (DepotClient depot = DepotClient.open(Path.of(a[0]))) {
                for (int i = 0; i < count; i++) {
                    String name = a[1] + "-" + i;
                    try (ObjectWriter w = depot.create(Payloads.id(name, size), size)) {
                        Payloads.fill(w.data(), name);
                        w.seal();
                    }
                }
            }
            System.out.println("produced " + count);
        }
    }

    /** {@code DIR PREFIX COUNT SIZE}: gets and verifies COUNT objects, waiting for each to be sealed. */
    static final class Consumer {
        public static void main(String[] a) {
            int count = Integer.parseInt(a[2]);
            long size = Long.parseLong(a[3]);
            try (DepotClient depot = DepotClient.open(Path.of(a[0]))) {
                System.out.println("waiting");
                for (int i = 0; i < count; i++) {
                    String name = a[1] + "-" + i;
                    try (ObjectView v = depot.get(Payloads.id(name, size), 60_000)) {
                        String bad = Payloads.verify(v.data(), name);
                        if (bad != null) {
                            System.out.println("FAIL " + bad);
                            return;
                        }
                    }
                }
            }
            System.out.println("consumed " + count);
        }
    }

    /** {@code DIR NAME SIZE}: creates an object, writes half of it, never seals, then hangs. */
    static final class HalfWriter {
        public static void main(String[] a) throws InterruptedException {
            long size = Long.parseLong(a[2]);
            DepotClient depot = DepotClient.open(Path.of(a[0]));
            ObjectWriter w = depot.create(Payloads.id(a[1], size), size);
            w.data().asSlice(0, size / 2).fill((byte) 1);
            System.out.println("created");
            sleepForever();
        }
    }

    /** {@code DIR SIZE NAME...}: pins the named objects, then hangs. */
    static final class Pinner {
        public static void main(String[] a) throws InterruptedException {
            long size = Long.parseLong(a[1]);
            DepotClient depot = DepotClient.open(Path.of(a[0]));
            List<ObjectView> views = new ArrayList<>();
            for (int i = 2; i < a.length; i++) {
                views.add(depot.get(Payloads.id(a[i], size), 10_000));
            }
            System.out.println("pinned " + views.size());
            sleepForever();
        }
    }

    /** {@code DIR CAPACITY}: runs a daemon (no control socket) until killed. */
    static final class Daemon {
        public static void main(String[] a) throws InterruptedException {
            DepotServer server = DepotServer.start(ServerConfig.defaults().withDirectory(Path.of(a[0]))
                .withCapacity(Long.parseLong(a[1])).withControlSocket(false), msg -> System.err.println("daemon: " + msg));
            System.out.println("ready " + server.directory());
            sleepForever();
        }
    }

    /**
     * {@code DIR SEED OPS NAMES}: random create / get+verify / delete over a namespace of NAMES names shared
     * with the other stress children. Prints {@code ok} or {@code FAIL reason}.
     */
    static final class Stress {
        public static void main(String[] a) {
            SplittableRandom rnd = new SplittableRandom(Long.parseLong(a[1]));
            int ops = Integer.parseInt(a[2]);
            int names = Integer.parseInt(a[3]);
            long[] sizes = {0, 1, 100, 4096, 65_536, 1 << 20};
            int verified = 0;
            try (DepotClient depot = DepotClient.open(Path.of(a[0]))) {
                for (int op = 0; op < ops; op++) {
                    String name = "s" + rnd.nextInt(names);
                    long size = sizes[rnd.nextInt(sizes.length)];
                    ObjectId id = Payloads.id(name, size);
                    switch (rnd.nextInt(4)) {
                        case 0, 1 -> {
                            try (ObjectView v = depot.tryGet(id, 0)) {
                                if (v != null) {
                                    String bad = Payloads.verify(v.data(), name);
                                    if (bad != null) {
                                        System.out.println("FAIL " + bad);
                                        return;
                                    }
                                    verified++;
                                }
                            }
                        }
                        case 2 -> {
                            try (ObjectWriter w = depot.create(id, size)) {
                                Payloads.fill(w.data(), name);
                                if (rnd.nextInt(10) > 0) {
                                    w.seal();
                                }
                            } catch (ObjectExistsException e) {
                                // another child made it first
                            }
                        }
                        default -> depot.delete(id);
                    }
                }
            } catch (RuntimeException e) {
                System.out.println("FAIL " + e);
                return;
            }
            System.out.println("ok verified=" + verified);
        }
    }
}
