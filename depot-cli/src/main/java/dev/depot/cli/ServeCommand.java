package dev.depot.cli;

import dev.depot.core.store.StoreLayout;
import dev.depot.errors.DepotException;
import dev.depot.server.DepotServer;
import dev.depot.server.ServerConfig;
import dev.depot.server.metrics.DepotMetrics;
import dev.depot.server.metrics.MetricsServer;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * {@code depot serve}: runs the daemon in the foreground until SIGTERM or SIGINT. Logs go to stderr; exactly one
 * line goes to stdout, when the store is ready: {@code depot: serving DIR (capacity SIZE)}. On a signal a
 * shutdown hook closes the daemon (the objects stay in the store file) and the process exits with status 0.
 */
final class ServeCommand implements Command {
    static final String READY_PREFIX = "depot: serving ";
    /** Smallest index the store accepts (see StoreLayout), and the largest we let one ask for. */
    static final int MIN_INDEX_SLOTS = 16;
    static final int MAX_INDEX_SLOTS = 1 << 30;

    @Override
    public String name() {
        return "serve";
    }

    @Override
    public String synopsis() {
        return "[--capacity SIZE] [--max-clients N] [--max-objects N] [--metrics HOST:PORT]";
    }

    @Override
    public String summary() {
        return "run the daemon in the foreground (creates the store if there is none)";
    }

    @Override
    public String details() {
        return """
            --capacity, --max-clients and --max-objects only apply when the store is created; an existing
            store keeps its own (remove the directory to change them). Prints one line on stdout when ready,
            `depot: serving DIR (capacity SIZE)`, logs to stderr, and exits 0 after a clean shutdown on
            SIGTERM or SIGINT. Exit status 1 when another daemon serves the store already.
            --metrics logs `depot: metrics at http://HOST:PORT/metrics` on stderr; the metric names are listed
            in docs/CLI.md.
            """;
    }

    @Override
    public List<Args.Option> options() {
        return List.of(
            new Args.Option("--capacity", null, "SIZE", "heap size of a new store: 4g, 512m, 64k or bytes (default 1g)"),
            new Args.Option("--max-clients", null, "N", "processes that may use the store at once, 2..65535 (default "
                + ServerConfig.defaults().maxClients() + ")"),
            new Args.Option("--max-objects", null, "N", "objects the store can hold (default: 3 per 64 KiB of capacity, "
                + "at least 3072)"),
            new Args.Option("--metrics", null, "HOST:PORT", "serve Prometheus metrics at http://HOST:PORT/metrics "
                + "(off by default; PORT alone: 127.0.0.1)"));
    }

    @Override
    public int run(Context ctx) throws InterruptedException {
        ServerConfig config = config(ctx.dir(), ctx.args());
        InetSocketAddress metricsAddress = ctx.args().has("--metrics")
            ? MetricsAddress.parse(ctx.args().value("--metrics")) : null;
        int running = DepotServer.liveDaemonPid(ctx.dir());
        if (running > 0) {
            throw new DepotException("a daemon (pid " + running + ") already serves the store at " + ctx.dir()
                + "; use it, or stop it first (kill " + running + ")");
        }
        PrintStream err = ctx.err();
        DepotServer server = DepotServer.start(config, msg -> err.println("depot: " + Main.oneLine(msg)));
        MetricsServer metrics;
        try {
            metrics = metricsAddress == null ? null : MetricsServer.start(metricsAddress, DepotMetrics.sourceOf(server));
        } catch (RuntimeException e) {
            server.close();
            throw e;
        }
        if (metrics != null) {
            err.println("depot: metrics at " + metrics.url());
        }
        long capacity = server.client().stats().capacityBytes();
        CountDownLatch stopped = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            int status = 0;
            try {
                if (metrics != null) {
                    metrics.close();
                }
                server.close();
                err.println("depot: stopped serving " + ctx.dir());
            } catch (RuntimeException e) {
                err.println("depot: stopping the daemon failed: " + Main.oneLine(String.valueOf(e))
                    + "; the next `depot serve` recovers the store");
                status = 1;
            }
            ctx.out().flush();
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
            ctx.out().flush();
            Runtime.getRuntime().halt(1);
        });
        ctx.out().println(READY_PREFIX + ctx.dir() + " (capacity " + Size.format(capacity) + ")");
        ctx.out().flush();
        try {
            stopped.await();
        } catch (InterruptedException e) {
            // stopped from inside this JVM (an embedding program): stop serving without the hook
            Runtime.getRuntime().removeShutdownHook(hook);
            if (metrics != null) {
                metrics.close();
            }
            server.close();
            throw e;
        }
        return 0;
    }

    static ServerConfig config(Path dir, Args args) {
        ServerConfig config = ServerConfig.defaults().withDirectory(dir);
        if (args.has("--capacity")) {
            long capacity = args.size("--capacity", ServerConfig.DEFAULT_CAPACITY);
            if (capacity < StoreLayout.MIN_CAPACITY) {
                throw new Args.UsageException("--capacity must be at least 4k, got " + args.value("--capacity"));
            }
            if (capacity > StoreLayout.MAX_CAPACITY) {
                throw new Args.UsageException("--capacity " + args.value("--capacity") + " is too large (at most "
                    + Size.format(StoreLayout.MAX_CAPACITY) + ")");
            }
            config = config.withCapacity(capacity);
        }
        if (args.has("--max-clients")) {
            long clients = args.number("--max-clients", 0);
            if (clients < 2 || clients > 65535) {
                throw new Args.UsageException("--max-clients must be 2..65535, got " + clients);
            }
            config = config.withMaxClients((int) clients);
        }
        if (args.has("--max-objects")) {
            config = config.withIndexSlots(indexSlotsFor(args.number("--max-objects", 0)));
        }
        args.expectPositionals(0, 0, "no arguments");
        return config;
    }

    /**
     * Index slots for {@code maxObjects}: the index keeps a quarter of its slots free, so the next power of two
     * of {@code maxObjects * 4 / 3} (at least {@link #MIN_INDEX_SLOTS}).
     */
    static int indexSlotsFor(long maxObjects) {
        long limit = MAX_INDEX_SLOTS / 4 * 3;
        if (maxObjects < 1 || maxObjects > limit) {
            throw new Args.UsageException("--max-objects must be 1.." + limit + ", got " + maxObjects);
        }
        long wanted = Math.max(MIN_INDEX_SLOTS, (maxObjects * 4 + 2) / 3);
        return (int) Math.max(MIN_INDEX_SLOTS, Long.highestOneBit(wanted - 1) << 1);
    }
}
