package dev.depot.server.multiprocess;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectView;
import dev.depot.client.ObjectWriter;
import dev.depot.server.DepotServer;
import dev.depot.server.ServerConfig;
import java.nio.file.Path;
import java.time.Duration;

/** Child processes of {@link SpillTest}. Each prints what it did on stdout, one line per step. */
final class SpillChildren {
    private SpillChildren() {
    }

    static String name(String prefix, int i) {
        return prefix + "-" + i;
    }

    /** {@code DIR CAPACITY SPILL_DIR}: a daemon that spills to SPILL_DIR; prints {@code ready}. */
    static final class SpillDaemon {
        public static void main(String[] a) throws InterruptedException {
            DepotServer server = DepotServer.start(ServerConfig.defaults().withDirectory(Path.of(a[0]))
                .withCapacity(Long.parseLong(a[1])).withControlSocket(false).withSpillDirectory(Path.of(a[2])),
                msg -> System.err.println("daemon: " + msg));
            System.out.println("ready " + server.directory());
            System.out.flush();
            Thread.sleep(Long.MAX_VALUE);
        }
    }

    /** {@code DIR PREFIX COUNT SIZE}: puts COUNT KEEP objects of SIZE bytes, waiting for room; prints {@code wrote I}. */
    static final class KeepWriter {
        public static void main(String[] a) {
            int count = Integer.parseInt(a[2]);
            long size = Long.parseLong(a[3]);
            try (DepotClient depot = DepotClient.open(Path.of(a[0]))) {
                for (int i = 0; i < count; i++) {
                    String name = name(a[1], i);
                    try (ObjectWriter w = depot.create(Payloads.id(name, size), size, new byte[] {7},
                        Duration.ofSeconds(120), DepotClient.CreateOption.KEEP)) {
                        Payloads.fill(w.data(), name);
                        w.seal();
                    }
                    System.out.println("wrote " + i);
                    System.out.flush();
                }
            }
            System.out.println("done");
        }
    }

    /** {@code DIR NAME SIZE}: gets one object (restoring it if spilled) and verifies it; prints the outcome. */
    static final class Reader {
        public static void main(String[] a) {
            long size = Long.parseLong(a[2]);
            try (DepotClient depot = DepotClient.open(Path.of(a[0]));
                 ObjectView v = depot.get(Payloads.id(a[1], size), 120_000)) {
                String problem = Payloads.verify(v.data(), a[1]);
                System.out.println(problem == null ? "verified" : "FAIL " + problem);
            }
        }
    }

    static ObjectId id(String prefix, int i, long size) {
        return Payloads.id(name(prefix, i), size);
    }
}
