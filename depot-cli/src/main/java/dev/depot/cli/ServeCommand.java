package dev.depot.cli;

import dev.depot.core.clients.ClientTableDescriptor;
import dev.depot.core.store.StoreLayout;
import dev.depot.errors.DepotException;
import dev.depot.server.DepotServer;
import dev.depot.server.ServerConfig;
import dev.depot.server.metrics.MetricsServer;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code depot serve}: runs the daemon in the foreground until SIGTERM or SIGINT. Logs go to stderr; exactly one
 * line goes to stdout, when the store is ready: {@code depot: serving DIR (capacity SIZE)}. On a signal a
 * shutdown hook closes the daemon (the objects stay in the store file) and the process exits with status 0.
 */
@Command(name = "serve",
    customSynopsis = "depot serve [--capacity SIZE] [--max-clients N] [--max-objects N] [--metrics HOST:PORT]"
        + " [--spill-dir DIR [--spill-limit SIZE]]",
    description = "run the daemon in the foreground (creates the store if there is none)",
    footer = {"--capacity, --max-clients and --max-objects only apply when the store is created; an existing",
        "store keeps its own (remove the directory to change them). Prints one line on stdout when ready,",
        "`depot: serving DIR (capacity SIZE)`, logs to stderr, and exits 0 after a clean shutdown on",
        "SIGTERM or SIGINT. Exit status 1 when another daemon serves the store already.",
        "--metrics logs `depot: metrics at http://HOST:PORT/metrics` on stderr; the metric names are listed",
        "in docs/CLI.md.",
        "--spill-dir: objects put with --keep (CreateOption.KEEP, keep=True) are written to DIR when room is",
        "needed, least recently used first, and read back when they are read; --spill-limit caps DIR's size."})
final class ServeCommand extends StoreCommand {
    static final String READY_PREFIX = "depot: serving ";
    /** Smallest index the store accepts (see StoreLayout), and the largest we let one ask for. */
    static final int MIN_INDEX_SLOTS = 16;
    static final int MAX_INDEX_SLOTS = 1 << 30;

    @Option(names = "--capacity", paramLabel = "SIZE",
        description = "heap size of a new store: 4g, 512m, 64k or bytes (default 1g)")
    String capacity;

    @Option(names = "--max-clients", paramLabel = "N",
        description = "processes that may use the store at once, 2..65535 (default "
            + ClientTableDescriptor.DEFAULT_MAX_CLIENTS + ")")
    Long maxClients;

    @Option(names = "--max-objects", paramLabel = "N",
        description = "objects the store can hold (default: 3 per 64 KiB of capacity, at least 3072)")
    Long maxObjects;

    @Option(names = "--spill-dir", paramLabel = "DIR",
        description = "spill KEEP objects to DIR when room is needed (off by default)")
    Path spillDir;

    @Option(names = "--spill-limit", paramLabel = "SIZE",
        description = "most bytes --spill-dir may hold: 100g, 512m or bytes (default: the disk's free space)")
    String spillLimit;

    @Option(names = "--metrics", paramLabel = "HOST:PORT",
        description = "serve Prometheus metrics at http://HOST:PORT/metrics (off by default; PORT alone: 127.0.0.1)")
    String metrics;

    @Override
    int run() throws InterruptedException {
        Path dir = dir();
        ServerConfig config = config(dir);
        InetSocketAddress metricsAddress = metrics == null ? null : MetricsAddress.parse(metrics);
        int running = DepotServer.liveDaemonPid(dir);
        if (running > 0) {
            throw new DepotException("a daemon (pid " + running + ") already serves the store at " + dir
                + "; use it, or stop it first (kill " + running + ")");
        }
        PrintStream err = err();
        DepotServer server = DepotServer.start(config, msg -> err.println("depot: " + Main.oneLine(msg)));
        MetricsServer metricsServer;
        try {
            metricsServer = metricsAddress == null ? null
                : MetricsServer.start(metricsAddress, server.metricsSource());
        } catch (RuntimeException e) {
            server.close();
            throw e;
        }
        if (metricsServer != null) {
            err.println("depot: metrics at " + metricsServer.url());
        }
        long actualCapacity = server.client().stats().capacityBytes();
        CountDownLatch stopped = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            int status = 0;
            try {
                if (metricsServer != null) {
                    metricsServer.close();
                }
                server.close();
                err.println("depot: stopped serving " + dir);
            } catch (RuntimeException e) {
                err.println("depot: stopping the daemon failed: " + Main.oneLine(String.valueOf(e))
                    + "; the next `depot serve` recovers the store");
                status = 1;
            }
            out().flush();
            err.flush();
            stopped.countDown();
            // a JVM ended by a signal exits with 128 + signal; a clean shutdown is a success
            Runtime.getRuntime().halt(status);
        }, "depot-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        // The daemon already logged why; a daemon that cannot go on exits non-zero instead of running on without
        // its reaper (the store file is not touched again: it may be truncated under the mapping).
        server.onFailure(why -> {
            err.flush();
            out().flush();
            Runtime.getRuntime().halt(1);
        });
        out().println(READY_PREFIX + dir + " (capacity " + Size.format(actualCapacity) + ")");
        out().flush();
        try {
            stopped.await();
        } catch (InterruptedException e) {
            // stopped from inside this JVM (an embedding program): stop serving without the hook
            Runtime.getRuntime().removeShutdownHook(hook);
            if (metricsServer != null) {
                metricsServer.close();
            }
            server.close();
            throw e;
        }
        return 0;
    }

    private ServerConfig config(Path dir) {
        ServerConfig config = ServerConfig.defaults().withDirectory(dir);
        if (capacity != null) {
            long bytes;
            try {
                bytes = Size.parse(capacity);
            } catch (IllegalArgumentException e) {
                throw new UsageException("--capacity: " + e.getMessage(), e);
            }
            if (bytes < StoreLayout.MIN_CAPACITY) {
                throw new UsageException("--capacity must be at least 4k, got " + capacity);
            }
            if (bytes > StoreLayout.MAX_CAPACITY) {
                throw new UsageException("--capacity " + capacity + " is too large (at most "
                    + Size.format(StoreLayout.MAX_CAPACITY) + ")");
            }
            config = config.withCapacity(bytes);
        }
        if (maxClients != null) {
            if (maxClients < 2 || maxClients > 65535) {
                throw new UsageException("--max-clients must be 2..65535, got " + maxClients);
            }
            config = config.withMaxClients(maxClients.intValue());
        }
        if (maxObjects != null) {
            config = config.withIndexSlots(indexSlotsFor(maxObjects));
        }
        if (spillLimit != null && spillDir == null) {
            throw new UsageException("--spill-limit needs --spill-dir");
        }
        if (spillDir != null) {
            config = config.withSpillDirectory(spillDir);
        }
        if (spillLimit != null) {
            long bytes;
            try {
                bytes = Size.parse(spillLimit);
            } catch (IllegalArgumentException e) {
                throw new UsageException("--spill-limit: " + e.getMessage(), e);
            }
            if (bytes <= 0) {
                throw new UsageException("--spill-limit must be positive, got " + spillLimit);
            }
            config = config.withSpillLimit(bytes);
        }
        return config;
    }

    /**
     * Index slots for {@code maxObjects}: the index keeps a quarter of its slots free, so the next power of two
     * of {@code maxObjects * 4 / 3} (at least {@link #MIN_INDEX_SLOTS}).
     */
    static int indexSlotsFor(long maxObjects) {
        long limit = MAX_INDEX_SLOTS / 4 * 3;
        if (maxObjects < 1 || maxObjects > limit) {
            throw new UsageException("--max-objects must be 1.." + limit + ", got " + maxObjects);
        }
        long wanted = Math.max(MIN_INDEX_SLOTS, (maxObjects * 4 + 2) / 3);
        return (int) Math.max(MIN_INDEX_SLOTS, Long.highestOneBit(wanted - 1) << 1);
    }
}
