package dev.depot.torture;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectInfo;
import dev.depot.client.ObjectState;
import dev.depot.client.ObjectView;
import dev.depot.client.ObjectWriter;
import dev.depot.client.StoreStats;
import dev.depot.client.internal.StoreClients;
import dev.depot.core.heap.HeapBlockDescriptor;
import dev.depot.core.store.ScratchDirectory;
import dev.depot.server.DepotServer;
import dev.depot.server.ServerConfig;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Crash torture: K worker processes hammer a store while the driver kills a random one with SIGKILL at a
 * random moment, cycle after cycle (and, with {@code --kill-daemon}, kills and restarts the daemon too).
 * After each kill it checks that the dead worker is reclaimed, that the store takes new work at once, and
 * that every sealed object still verifies; at the end, with every worker gone, that nothing leaked: no pins,
 * no unsealed bytes, used bytes equal to the live objects' blocks, and the index and heap agree.
 *
 * <pre>
 *   scripts/torture --minutes 10 [--workers 4] [--kill-daemon]
 *   scripts/torture --kills 50
 * </pre>
 */
public final class Torture {
    static final int PERMANENT = 20;
    static final long PERMANENT_SIZE = 64 * 1024;
    static final long CAPACITY = 256L << 20;

    /**
     * What a run found. {@code pythonKills} of the {@code kills} were of Python workers; {@code maxPythonReclaimMillis}
     * is the longest wait, after killing one, until no object of its namespace was pinned or unsealed.
     */
    public record Result(int kills, int daemonKills, long objectsVerified, long maxReclaimMillis, long maxProbeMillis,
                         int pythonKills, long maxPythonReclaimMillis, List<String> problems) {
        public boolean ok() {
            return problems.isEmpty();
        }

        String json() {
            return "{\"kills\":" + kills + ",\"daemon_kills\":" + daemonKills + ",\"objects_verified\":" + objectsVerified
                + ",\"max_reclaim_ms\":" + maxReclaimMillis + ",\"max_probe_ms\":" + maxProbeMillis
                + ",\"python_kills\":" + pythonKills + ",\"max_python_reclaim_ms\":" + maxPythonReclaimMillis
                + ",\"problems\":" + problems.size() + ",\"ok\":" + ok() + "}";
        }
    }

    private final int workers;
    private final int javaWorkers;
    private final int kills;
    private final long deadlineNanos;
    private final boolean killDaemon;
    private final SplittableRandom rnd;
    private final ScratchDirectory scratch = new ScratchDirectory("depot-torture");
    private final Path dir = scratch.path();
    private final List<String> problems = new ArrayList<>();
    private final ChildProcess[] running;
    private Python python;
    private int pythonKills;
    private long maxPythonReclaim;
    private DepotServer server;
    private ChildProcess daemon;
    private DepotClient depot;
    private long verified;
    private long maxReclaim;
    private long maxProbe;

    Torture(int workers, int pythonWorkers, int kills, long minutes, boolean killDaemon, long seed) {
        this.workers = workers + pythonWorkers;
        this.javaWorkers = workers;
        this.kills = kills;
        this.deadlineNanos = minutes > 0 ? System.nanoTime() + minutes * 60_000_000_000L : Long.MAX_VALUE;
        this.killDaemon = killDaemon;
        this.rnd = new SplittableRandom(seed);
        this.running = new ChildProcess[this.workers];
    }

    public static void main(String[] args) throws Exception {
        if (List.of(args).contains("--overlap")) {
            Overlap.main(args);
            return;
        }
        int workers = 3;
        int pythonWorkers = 0;
        int kills = 50;
        long minutes = 0;
        boolean killDaemon = false;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--workers" -> workers = Integer.parseInt(args[++i]);
                case "--python" -> pythonWorkers = Integer.parseInt(args[++i]);
                case "--kills" -> kills = Integer.parseInt(args[++i]);
                case "--minutes" -> {
                    minutes = Long.parseLong(args[++i]);
                    kills = Integer.MAX_VALUE;
                }
                case "--kill-daemon" -> killDaemon = true;
                default -> {
                    System.err.println("usage: torture [--kills N | --minutes M] [--workers K] [--python P]"
                        + " [--kill-daemon] | --overlap ...");
                    System.exit(2);
                }
            }
        }
        Result r = run(workers, pythonWorkers, kills, minutes, killDaemon, System.nanoTime());
        r.problems().forEach(p -> System.out.println("PROBLEM " + p));
        System.out.println(r.json());
        System.exit(r.ok() ? 0 : 1);
    }

    /** Runs the torture; the store directory is removed and every child reaped before it returns. */
    public static Result run(int workers, int kills, long minutes, boolean killDaemon, long seed) throws Exception {
        return run(workers, 0, kills, minutes, killDaemon, seed);
    }

    /**
     * As {@link #run(int, int, long, boolean, long)} with {@code pythonWorkers} Python clients
     * ({@code torture_worker.py}) among the workers, killed like the others.
     */
    public static Result run(int workers, int pythonWorkers, int kills, long minutes, boolean killDaemon, long seed)
        throws Exception {
        Torture t = new Torture(workers, pythonWorkers, kills, minutes, killDaemon, seed);
        try {
            return t.runCycles();
        } finally {
            t.cleanUp();
        }
    }

    private Result runCycles() throws Exception {
        if (workers > javaWorkers) {
            python = new Python();
        }
        startDaemon();
        depot = killDaemon ? DepotClient.open(dir) : server.client();
        for (int i = 0; i < PERMANENT; i++) {
            ObjectId id = ObjectId.of("perm-" + i);
            try (ObjectWriter w = depot.create(id, PERMANENT_SIZE)) {
                Payload.fill(w.data(), id);
                w.seal();
            }
        }
        for (int k = 0; k < workers; k++) {
            startWorker(k);
        }
        int done = 0;
        int daemonKills = 0;
        while (done < kills && System.nanoTime() < deadlineNanos && problems.isEmpty()) {
            Thread.sleep(20 + rnd.nextInt(300));
            collectWorkerReports();
            int victim = rnd.nextInt(workers);
            running[victim].kill();
            done++;
            if (killDaemon && done % 5 == 0) {
                daemon.kill();
                daemonKills++;
                startDaemon();
            }
            probe();
            if (victim >= javaWorkers) {
                pythonKills++;
                awaitPythonReclaimed(victim);
            }
            awaitReclaimed();
            verifyAll();
            startWorker(victim);
        }
        for (int k = 0; k < workers; k++) {
            running[k].kill();
        }
        collectWorkerReports();
        awaitReclaimed();
        checkNoLeaks();
        return new Result(done, daemonKills, verified, maxReclaim, maxProbe, pythonKills, maxPythonReclaim,
            List.copyOf(problems));
    }

    private void startDaemon() throws InterruptedException {
        if (killDaemon) {
            daemon = new ChildProcess(DaemonProcess.class, dir.toString(), Long.toString(CAPACITY),
                Boolean.toString(python != null));
            daemon.await("ready", 60);
        } else {
            server = DepotServer.start(ServerConfig.defaults().withDirectory(dir).withCapacity(CAPACITY)
                .withControlSocket(python != null), msg -> { });
        }
    }

    private void startWorker(int slot) throws InterruptedException {
        if (slot < javaWorkers) {
            running[slot] = new ChildProcess(TortureWorker.class, dir.toString(), Integer.toString(slot),
                Long.toString(rnd.nextLong()), Integer.toString(PERMANENT));
        } else {
            running[slot] = python.start("torture_worker.py", dir.toString(), Integer.toString(slot),
                Long.toString(rnd.nextLong() & Long.MAX_VALUE), Integer.toString(PERMANENT));
        }
        running[slot].await("started", 60);
    }

    /**
     * After a Python worker's kill: waits until no object of its namespace is pinned or unsealed (only it
     * pinned or created them), which the daemon does within a second.
     */
    private void awaitPythonReclaimed(int slot) throws InterruptedException {
        java.util.Set<ObjectId> mine = new java.util.HashSet<>();
        for (int n = 0; n < 40; n++) {
            mine.add(ObjectId.of("p" + slot + "-" + n));
        }
        long start = System.nanoTime();
        while (depot.list().stream().anyMatch(o -> mine.contains(o.id())
            && (o.pinCount() > 0 || o.state() == ObjectState.CREATING))) {
            if (System.nanoTime() - start > 30_000_000_000L) {
                problems.add("a killed Python worker's pins or unsealed objects were not reclaimed within 30 s");
                return;
            }
            Thread.sleep(5);
        }
        maxPythonReclaim = Math.max(maxPythonReclaim, (System.nanoTime() - start) / 1_000_000);
    }

    private void collectWorkerReports() {
        for (ChildProcess w : running) {
            for (String line; (line = w.lines.poll()) != null; ) {
                if (line.startsWith("CORRUPT") || line.startsWith("FAIL")) {
                    problems.add("worker: " + line);
                }
            }
        }
    }

    /** Right after a kill, the store must take new work: create, seal, get and delete a probe object. */
    private void probe() {
        long start = System.nanoTime();
        ObjectId id = ObjectId.random();
        try (ObjectWriter w = depot.create(id, 4096)) {
            Payload.fill(w.data(), id);
            w.seal();
        }
        try (ObjectView v = depot.get(id, 0)) {
            String bad = Payload.verify(v.data(), id);
            if (bad != null) {
                problems.add("probe: " + bad);
            }
        }
        depot.delete(id);
        maxProbe = Math.max(maxProbe, (System.nanoTime() - start) / 1_000_000);
    }

    /**
     * Waits until no client slot of a dead process is registered and no more than the live processes may hold.
     * Not a count expected from each worker's start: a Python client gets a second slot (the daemon's session
     * for its connection) whenever it connects, and after a daemon kill it reconnects at its next request, so the
     * count moved under a worker's start and the expectation drifted (a killed client "not reclaimed" in ~1 of 3
     * runs of {@code --kill-daemon} with Python workers, every slot alive).
     */
    private void awaitReclaimed() throws InterruptedException {
        long start = System.nanoTime();
        for (String stale = unreclaimed(); stale != null; stale = unreclaimed()) {
            if (System.nanoTime() - start > 30_000_000_000L) {
                problems.add("a killed client was not reclaimed within 30 s: " + stale + " (registered: "
                    + registeredSlots() + ")");
                return;
            }
            Thread.sleep(5);
        }
        maxReclaim = Math.max(maxReclaim, (System.nanoTime() - start) / 1_000_000);
    }

    /** What is registered and should not be, or null. */
    private String unreclaimed() {
        var clients = StoreClients.storeOf(depot).clients();
        int registered = 0;
        StringBuilder dead = new StringBuilder();
        for (int c = 0; c < clients.maxClients(); c++) {
            long identity = clients.identity(c);
            if (identity == 0) {
                continue;
            }
            registered++;
            if (!dev.depot.core.sys.ProcessIdentity.isAlive(identity)) {
                dead.append(dead.isEmpty() ? "" : ", ").append("slot ").append(c).append(" of pid ")
                    .append(dev.depot.core.sys.ProcessIdentity.pidOf(identity));
            }
        }
        if (!dead.isEmpty()) {
            return "slots of dead processes (" + dead + ")";
        }
        int most = mostLiveSlots();
        return registered > most ? registered + " slots registered, the live processes hold at most " + most : null;
    }

    /**
     * The driver's and the daemon's slots (one process without {@code --kill-daemon}), one per live Java worker and
     * two per live Python worker (its own, and the daemon's session for its connection).
     */
    private int mostLiveSlots() {
        int n = killDaemon ? 2 : 1;
        for (int k = 0; k < workers; k++) {
            if (running[k] != null && running[k].isAlive()) {
                n += k < javaWorkers ? 1 : 2;
            }
        }
        return n;
    }

    /** The registered client slots, each as {@code slot:pid(alive|dead)}, and whose processes they are. */
    private String registeredSlots() {
        var clients = StoreClients.storeOf(depot).clients();
        StringBuilder out = new StringBuilder();
        for (int c = 0; c < clients.maxClients(); c++) {
            long identity = clients.identity(c);
            if (identity != 0) {
                out.append(c).append(':').append(dev.depot.core.sys.ProcessIdentity.pidOf(identity))
                    .append(dev.depot.core.sys.ProcessIdentity.isAlive(identity) ? "(alive) " : "(dead) ");
            }
        }
        out.append("| driver ").append(ProcessHandle.current().pid());
        if (daemon != null) {
            out.append(", daemon ").append(daemon.pid());
        }
        for (int k = 0; k < running.length; k++) {
            if (running[k] != null) {
                out.append(", worker ").append(k).append(' ').append(running[k].pid())
                    .append(running[k].isAlive() ? "" : " (dead)");
            }
        }
        return out.toString();
    }

    private void verifyAll() {
        for (int i = 0; i < PERMANENT; i++) {
            ObjectId id = ObjectId.of("perm-" + i);
            try (ObjectView v = depot.tryGet(id, 0)) {
                if (v == null) {
                    problems.add("permanent object perm-" + i + " is lost");
                }
            }
        }
        for (ObjectInfo o : depot.list()) {
            if (o.state() != ObjectState.SEALED) {
                continue;
            }
            try (ObjectView v = depot.tryGet(o.id(), 0)) {
                if (v != null) {
                    String bad = Payload.verify(v.data(), o.id());
                    if (bad != null) {
                        problems.add(bad);
                    }
                    verified++;
                }
            }
        }
    }

    private void checkNoLeaks() throws InterruptedException {
        // Deletes deferred by pins of killed workers are completed by the daemon's sweep (within a second).
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (depot.list().stream().anyMatch(o -> o.state() == ObjectState.DELETE_PENDING)
            && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        verifyAll();
        StoreStats s = depot.stats();
        if (s.pinnedBytes() != 0) {
            problems.add("pins left after every worker died: " + s.pinnedBytes() + " bytes");
        }
        if (s.unsealedBytes() != 0) {
            problems.add("unsealed bytes left after every worker died: " + s.unsealedBytes());
        }
        long live = 0;
        for (ObjectInfo o : depot.list()) {
            if (o.state() != ObjectState.SEALED) {
                problems.add("object " + o.id() + " left in state " + o.state());
            }
            live += HeapBlockDescriptor.blockSizeFor(o.dataSize(), o.metadataSize());
        }
        if (live != s.usedBytes()) {
            problems.add("leak: used bytes " + s.usedBytes() + " but live objects take " + live);
        }
        if (s.evictionCount() != 0) {
            problems.add("objects were evicted (" + s.evictionCount() + "): the torture store is too small");
        }
        List<String> recovery = StoreClients.storeOf(depot).recover();
        recovery.forEach(p -> problems.add("recovery found: " + p));
        if (depot.stats().usedBytes() != s.usedBytes()) {
            problems.add("heap metadata disagreed with the index: used " + s.usedBytes() + " before a rebuild, "
                + depot.stats().usedBytes() + " after");
        }
    }

    private void cleanUp() throws InterruptedException, IOException {
        for (ChildProcess w : running) {
            if (w != null) {
                w.kill();
            }
        }
        if (depot != null && depot != (server == null ? null : server.client())) {
            depot.close();
        }
        if (server != null) {
            server.close();
        }
        if (daemon != null) {
            daemon.kill();
        }
        if (python != null) {
            python.close();
        }
        scratch.close();
    }
}
