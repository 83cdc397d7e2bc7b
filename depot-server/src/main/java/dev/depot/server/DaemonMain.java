package dev.depot.server;

import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;

/**
 * A bare daemon for tests and scripts: {@code DaemonMain --dir DIR [--capacity BYTES] [--spill-dir DIR]
 * [--spill-limit BYTES] [--max-clients N] [--index-slots N]} (index slots: a power of two, 3/4 of them objects).
 * Prints
 * {@code depot: serving DIR} on stdout once the control socket accepts connections, and stops cleanly on
 * SIGTERM or SIGINT (a shutdown hook closes the server, which removes the socket). The {@code depot serve}
 * command of the CLI is the user-facing way to run a daemon.
 */
public final class DaemonMain {
    private DaemonMain() {
    }

    public static void main(String[] args) throws InterruptedException {
        ServerConfig config = ServerConfig.defaults();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (i + 1 >= args.length) {
                usage("missing value after " + a);
            }
            switch (a) {
                case "--dir" -> config = config.withDirectory(Path.of(args[++i]));
                case "--capacity" -> config = config.withCapacity(parseBytes(args[++i]));
                case "--spill-dir" -> config = config.withSpillDirectory(Path.of(args[++i]));
                case "--spill-limit" -> config = config.withSpillLimit(parseBytes(args[++i]));
                case "--max-clients" -> config = config.withMaxClients(Math.toIntExact(parseBytes(args[++i])));
                case "--index-slots" -> config = config.withIndexSlots(Math.toIntExact(parseBytes(args[++i])));
                default -> usage("unknown option " + a);
            }
        }
        DepotServer server = DepotServer.start(config, msg -> System.err.println("depot: " + msg));
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close();
            stopped.countDown();
        }, "depot-shutdown"));
        System.out.println("depot: serving " + server.directory());
        System.out.flush();
        stopped.await();
    }

    private static long parseBytes(String s) {
        try {
            return Long.parseLong(s);
        } catch (NumberFormatException e) {
            usage("a size takes a number of bytes, got '" + s + "'");
            return 0;
        }
    }

    private static void usage(String problem) {
        System.err.println("depot: " + problem + "\nusage: DaemonMain --dir DIR [--capacity BYTES] [--spill-dir DIR]"
            + " [--spill-limit BYTES] [--max-clients N] [--index-slots N]");
        System.exit(2);
    }
}
