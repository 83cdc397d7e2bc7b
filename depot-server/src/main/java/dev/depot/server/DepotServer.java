package dev.depot.server;

import static dev.depot.core.store.StoreHeaderDescriptor.DAEMON_IDENTITY_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.DAEMON_STARTS_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.HEARTBEAT_OFFSET;

import dev.depot.client.DepotClient;
import dev.depot.client.StoreStats;
import dev.depot.client.internal.StoreClients;
import dev.depot.core.clients.ClientTableDescriptor;
import dev.depot.core.clients.ClientWatch;
import dev.depot.core.memory.Atomics;
import dev.depot.core.store.OperationCounts;
import dev.depot.core.store.Store;
import dev.depot.core.store.StoreFile;
import dev.depot.core.store.StoreLayout;
import dev.depot.core.sys.ProcessIdentity;
import dev.depot.errors.DepotException;
import dev.depot.server.metrics.DepotMetrics;
import dev.depot.server.metrics.ProtocolCounters;
import dev.depot.server.protocol.ControlServer;
import dev.depot.server.spill.Spiller;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The Depot daemon: creates (or takes over) a store, reclaims dead clients every {@code reapInterval}, keeps a
 * heartbeat in the header, and serves the control protocol on {@code DIR/depot.sock}. It can run in the
 * foreground ({@code depot serve}) or embedded in an application ({@link #embedded}).
 *
 * <p>With a spill directory, a {@link Spiller} thread writes KEEP objects there when room is needed and restores
 * them when read.
 *
 * <p>Lifecycle: {@link #start} returns a running server; {@link #close} stops it. Objects stay in the store file
 * after the daemon stops or dies; the next daemon recovers the store and carries on.
 */
public final class DepotServer implements AutoCloseable {
    /** FAILED: the daemon found it cannot go on (its store file was truncated, its reaper failed). */
    private enum State { RUNNING, FAILED, CLOSED }

    /** Reap rounds between full scans of the index for deferred deletes (about once a second). */
    private static final int FULL_SWEEP_EVERY = 10;

    private final ServerConfig config;
    private final Store store;
    private final DepotClient client;
    private final Consumer<String> log;
    private final Thread reaper;
    private final ControlServer control;
    private final Spiller spiller;
    private final long identity = ProcessIdentity.self();
    private final ProtocolCounters protocolCounters = new ProtocolCounters();
    private volatile State state = State.RUNNING;
    private volatile String failure;
    private volatile Consumer<String> onFailure;

    private DepotServer(ServerConfig config, Store store, Consumer<String> log) throws IOException {
        this.config = config;
        this.store = store;
        this.client = StoreClients.over(store, null);
        this.log = log;
        claimDaemonRole();
        List<String> problems = store.recover();
        problems.forEach(p -> log.accept("recovery: " + p));
        int reaped = store.reapDeadClientsAndSweep();
        if (reaped > 0) {
            log.accept("reclaimed " + reaped + " dead client(s)");
        }
        heartbeat();
        this.spiller = config.spillDirectory() == null ? null
            : Spiller.start(store, config.spillDirectory(), config.spillLimit(), log);
        this.control = config.controlSocket() ? ControlServer.start(store, client, protocolCounters, log) : null;
        this.reaper = Thread.ofPlatform().daemon().name("depot-reaper").start(this::reapLoop);
    }

    /**
     * Starts a daemon on {@code config.directory()}: opens the store there, or creates it with
     * {@code config.capacityForNewStore()} when there is none.
     *
     * @throws DepotException when another live daemon serves the store already
     */
    public static DepotServer start(ServerConfig config, Consumer<String> log) {
        Store store = openOrCreate(config, log);
        try {
            return new DepotServer(config, store, log);
        } catch (IOException e) {
            store.close();
            throw new UncheckedIOException("cannot start the daemon on " + config.directory() + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            store.close();
            throw e;
        }
    }

    /**
     * Opens the store in {@code dir} for this application, running the daemon inside this process when no
     * other daemon serves it (creating the store with {@code capacity} if there is none). Closing the returned
     * client stops the embedded daemon, if any.
     */
    public static DepotClient embedded(Path dir, long capacity) {
        ServerConfig config = ServerConfig.defaults().withDirectory(dir).withCapacity(capacity);
        if (liveDaemonPid(dir) > 0) {
            return DepotClient.open(dir);
        }
        DepotServer server;
        try {
            server = start(config, msg -> { });
        } catch (DepotException e) {
            if (liveDaemonPid(dir) > 0) {
                return DepotClient.open(dir);  // another process became the daemon first
            }
            throw e;
        }
        return StoreClients.over(server.store, server::stopServing);
    }

    private static Store openOrCreate(ServerConfig config, Consumer<String> log) {
        Path dir = config.directory();
        try {
            if (Files.exists(StoreFile.fileIn(dir))) {
                Store s = Store.open(dir, ClientTableDescriptor.KIND_DAEMON);
                if (config.capacity() > 0
                    && s.layout().heapLength() != StoreLayout.forCapacity(config.capacity(), 2, 1, 16).heapLength()) {
                    log.accept("the store at " + dir + " exists with capacity " + s.layout().heapLength()
                        + " bytes; keeping it (remove the directory to change the capacity)");
                }
                return s;
            }
            StoreLayout layout = StoreLayout.forCapacity(config.capacityForNewStore(), config.maxClients(), config.pinsPerClient(),
                config.indexSlots());
            try {
                return Store.create(dir, layout, ClientTableDescriptor.KIND_DAEMON);
            } catch (FileAlreadyExistsException raced) {
                return Store.open(dir, ClientTableDescriptor.KIND_DAEMON);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open or create the store at " + dir + ": " + e.getMessage(), e);
        }
    }

    /** Pid of the live daemon serving the store in {@code dir}, or 0. */
    public static int liveDaemonPid(Path dir) {
        long daemon = StoreFile.probeDaemonIdentity(dir);
        return ProcessIdentity.isAlive(daemon) ? ProcessIdentity.pidOf(daemon) : 0;
    }

    private void claimDaemonRole() {
        MemorySegment h = store.header();
        while (true) {
            long current = Atomics.getLongVolatile(h, DAEMON_IDENTITY_OFFSET);
            if (current != 0 && current != identity && ProcessIdentity.isAlive(current)) {
                throw new DepotException("a daemon (pid " + ProcessIdentity.pidOf(current) + ") already serves the store at "
                    + config.directory() + "; stop it first or use it");
            }
            if (Atomics.compareAndSetLong(h, DAEMON_IDENTITY_OFFSET, current, identity)) {
                Atomics.getAndAddLong(h, DAEMON_STARTS_OFFSET, 1);
                return;
            }
        }
    }

    private void heartbeat() {
        Atomics.putLongRelease(store.header(), HEARTBEAT_OFFSET, System.currentTimeMillis());
    }

    private void reapLoop() {
        try (ClientWatch watch = store.watchClients(log)) {
            reapRounds(watch);
        }
    }

    private void reapRounds(ClientWatch watch) {
        long rounds = 0;
        long expectedLength = store.layout().fileLength();
        while (state == State.RUNNING) {
            try {
                TimeUnit.MILLISECONDS.sleep(config.reapIntervalMillis());
            } catch (InterruptedException e) {
                return;
            }
            if (state != State.RUNNING) {
                return;
            }
            if (truncated(expectedLength)) {
                return;
            }
            try {
                boolean fullSweep = ++rounds % FULL_SWEEP_EVERY == 0;
                int n = store.reapDeadClients(watch, fullSweep);
                if (n > 0) {
                    log.accept("reclaimed " + n + " dead client(s)");
                }
            } catch (RuntimeException e) {
                if (state == State.RUNNING) {
                    log.accept("reaper: " + e);
                }
            } catch (Error e) {
                // A fault in the mapping (InternalError from SIGBUS) or worse: never run on without a reaper.
                if (!truncated(expectedLength)) {
                    fail("the reaper failed: " + e + "; stopping the daemon (the next `depot serve` recovers the store)");
                }
                return;
            }
            heartbeat();
        }
    }

    /**
     * True (and the daemon failed) when the store file is shorter than its layout: someone truncated it under
     * the mapping, and every access past the new end faults. Checked every reap round and after any fault.
     */
    private boolean truncated(long expectedLength) {
        long now = store.fileLengthNow();
        if (now < 0 || now >= expectedLength) {
            return false;
        }
        fail("the store file " + StoreFile.fileIn(directory()) + " was truncated to " + now + " bytes under the daemon"
            + " (it must have " + expectedLength + "); objects past that point are lost and any access to them faults,"
            + " so the daemon stops: remove the store directory and start a new store");
        return true;
    }

    /** Stops serving for good after a failure it cannot recover from; logs why and tells the failure handler. */
    private void fail(String why) {
        if (state != State.RUNNING) {
            return;
        }
        failure = why;
        state = State.FAILED;
        log.accept(why);
        try {
            if (control != null) {
                control.close();
            }
            if (spiller != null) {
                spiller.close();
            }
        } catch (RuntimeException | Error e) {
            log.accept("stopping the control socket or the spiller failed: " + e);
        }
        Consumer<String> handler = onFailure;
        if (handler != null) {
            handler.accept(why);
        }
    }

    /**
     * Calls {@code handler} (at once if it happened already) when the daemon fails for good: its store file was
     * truncated under it, or its reaper failed. {@code depot serve} exits non-zero then; an embedding
     * application decides for itself. The daemon has stopped serving by then.
     */
    public void onFailure(Consumer<String> handler) {
        onFailure = handler;
        String why = failure;
        if (why != null) {
            handler.accept(why);
        }
    }

    public ServerConfig config() {
        return config;
    }

    /** This daemon's own client (for the control protocol and tools). */
    public DepotClient client() {
        return client;
    }

    /** What the control protocol has served (for the metrics endpoint, {@code dev.depot.server.metrics}). */
    public ProtocolCounters protocolCounters() {
        return protocolCounters;
    }

    /** The figures the metrics endpoint serves: this daemon's store, its control server and its counters. */
    public DepotMetrics.Source metricsSource() {
        return new DepotMetrics.Source() {
            @Override
            public StoreStats stats() {
                return client.stats();
            }

            @Override
            public int openSessions() {
                return control == null ? 0 : control.connectionCount();
            }

            @Override
            public long sessionsOpened() {
                return control == null ? 0 : control.acceptedCount();
            }

            @Override
            public ProtocolCounters protocol() {
                return protocolCounters;
            }

            @Override
            public OperationCounts operations() {
                return store.operationCounts();
            }

            @Override
            public int subscribers() {
                return store.subscriberCount();
            }
        };
    }

    public Path directory() {
        return store.directory();
    }

    /** Stops the reaper and the control socket and gives up the daemon role, leaving the store open. */
    private void stopServing() {
        if (state == State.CLOSED) {
            return;
        }
        boolean failed = state == State.FAILED;
        state = State.CLOSED;
        if (Thread.currentThread() != reaper) {
            reaper.interrupt();
            try {
                reaper.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (control != null) {
            control.close();
        }
        if (spiller != null) {
            spiller.close();
        }
        if (!failed) {
            Atomics.compareAndSetLong(store.header(), DAEMON_IDENTITY_OFFSET, identity, 0);
        }
    }

    /** Stops serving and closes the store. Objects stay in the store file. */
    @Override
    public void close() {
        stopServing();
        client.close();
    }
}
