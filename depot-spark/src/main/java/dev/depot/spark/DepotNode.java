package dev.depot.spark;

import dev.depot.client.DepotClient;
import dev.depot.client.DepotDirectory;
import dev.depot.server.DaemonMain;
import dev.depot.server.DepotServer;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * This JVM's connection to its node's Depot store: one client per store directory, shared by every task of the
 * executor (or driver), and one Arrow allocator. {@link #attach} also makes sure a daemon serves the store,
 * starting one if needed (see {@link DaemonMode}).
 */
public final class DepotNode {
    /** Spark conf: the store directory (default {@code $DEPOT_DIR}, else {@code /dev/shm/depot-$USER}). */
    public static final String DIR_CONF = "spark.depot.dir";
    /** Spark conf: the capacity of a store the plugin creates (bytes, or with k/m/g). */
    public static final String CAPACITY_CONF = "spark.depot.capacity";
    public static final String CAPACITY_DEFAULT = "1g";
    /** Spark conf: what the plugin does when no daemon serves the store: {@code spawn}, {@code embedded}, {@code none}. */
    public static final String DAEMON_CONF = "spark.depot.daemon";
    public static final String DAEMON_DEFAULT = "spawn";
    /** How long {@link #attach} waits for a daemon it spawned to serve the store. */
    private static final long SPAWN_WAIT_MILLIS = 30_000;

    /** What to do on a node whose store no daemon serves. */
    public enum DaemonMode {
        /** Start {@code DaemonMain} as a separate process that outlives this JVM (shared by applications). */
        SPAWN,
        /** Run the daemon inside this JVM (it stops with it: for single-application and test use). */
        EMBEDDED,
        /** Do not start one: attaching fails when none runs. */
        NONE
    }

    private static final Map<Path, DepotClient> CLIENTS = new ConcurrentHashMap<>();
    private static volatile BufferAllocator allocator;

    private DepotNode() {
    }

    /** The store directory named by {@code dir} (null or empty: the default). */
    public static Path directory(String dir) {
        return dir == null || dir.isEmpty() ? DepotDirectory.defaultDirectory() : Path.of(dir);
    }

    /** This JVM's client of the store in {@code dir}, opened on first use. */
    public static DepotClient client(Path dir) {
        DepotClient c = CLIENTS.computeIfAbsent(dir, DepotClient::open);
        if (c.isClosed()) {
            CLIENTS.remove(dir, c);
            return client(dir);
        }
        return c;
    }

    /** This JVM's Arrow allocator for Depot readers and writers (each takes a child of it). */
    public static BufferAllocator allocator() {
        BufferAllocator a = allocator;
        if (a == null) {
            synchronized (DepotNode.class) {
                if (allocator == null) {
                    allocator = new RootAllocator();
                }
                a = allocator;
            }
        }
        return a;
    }

    /**
     * Attaches this JVM to the store in {@code dir}, first making a daemon serve it if none does.
     *
     * @return this JVM's client of it
     */
    public static synchronized DepotClient attach(Path dir, long capacity, DaemonMode mode) {
        DepotClient existing = CLIENTS.get(dir);
        if (existing != null && !existing.isClosed()) {
            return existing;
        }
        if (DepotServer.liveDaemonPid(dir) == 0) {
            switch (mode) {
                case EMBEDDED -> {
                    DepotClient c = DepotServer.embedded(dir, capacity);
                    CLIENTS.put(dir, c);
                    return c;
                }
                case SPAWN -> spawnDaemon(dir, capacity);
                case NONE -> { }
            }
        }
        return client(dir);
    }

    /** Starts {@code DaemonMain} on {@code dir} as a process of its own and waits until it serves the store. */
    private static void spawnDaemon(Path dir, long capacity) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("--enable-native-access=ALL-UNNAMED");
        cmd.add("-Xmx128m");
        cmd.add("-cp");
        cmd.add(daemonClassPath());
        cmd.add(DaemonMain.class.getName());
        cmd.add("--dir");
        cmd.add(dir.toString());
        cmd.add("--capacity");
        cmd.add(Long.toString(capacity));
        try {
            Files.createDirectories(dir);
            Path log = dir.resolveSibling(dir.getFileName() + ".daemon.log");
            new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start a Depot daemon on " + dir + ": " + e.getMessage(), e);
        }
        long deadline = System.nanoTime() + SPAWN_WAIT_MILLIS * 1_000_000L;
        while (DepotServer.liveDaemonPid(dir) == 0) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the Depot daemon started on " + dir + " did not serve it within "
                    + SPAWN_WAIT_MILLIS + " ms; see " + dir + ".daemon.log");
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for the Depot daemon on " + dir, e);
            }
        }
    }

    /** The jars (or class directories) of Depot's own modules, which are all the daemon needs. */
    private static String daemonClassPath() {
        Set<String> entries = new LinkedHashSet<>();
        for (Class<?> c : List.of(DaemonMain.class, DepotClient.class, dev.depot.core.store.Store.class)) {
            try {
                entries.add(Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toString());
            } catch (URISyntaxException | NullPointerException e) {
                throw new IllegalStateException("cannot locate the class path of " + c.getName(), e);
            }
        }
        return String.join(File.pathSeparator, entries);
    }

    /** Closes this JVM's client of the store in {@code dir}, if any (the embedded daemon too, if it runs here). */
    public static synchronized void detach(Path dir) {
        DepotClient c = CLIENTS.remove(dir);
        if (c != null) {
            c.close();
        }
    }

    /** Closes this JVM's clients (at executor shutdown). */
    public static synchronized void closeAll() {
        for (DepotClient c : CLIENTS.values()) {
            c.close();
        }
        CLIENTS.clear();
    }

    /** Parses a size such as {@code 1g}, {@code 512m} or a number of bytes. */
    public static long parseBytes(String s) {
        String t = s.trim().toLowerCase();
        long unit = switch (t.isEmpty() ? ' ' : t.charAt(t.length() - 1)) {
            case 'k' -> 1L << 10;
            case 'm' -> 1L << 20;
            case 'g' -> 1L << 30;
            case 't' -> 1L << 40;
            default -> 1;
        };
        String digits = unit == 1 ? t : t.substring(0, t.length() - 1);
        try {
            return Math.multiplyExact(Long.parseLong(digits), unit);
        } catch (NumberFormatException | ArithmeticException e) {
            throw new IllegalArgumentException("'" + s + "' is not a size (bytes, or a number with k, m, g, t)", e);
        }
    }
}
