package dev.depot.torture;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectInfo;
import dev.depot.client.ObjectState;
import dev.depot.client.StoreStats;
import dev.depot.client.internal.StoreClients;
import dev.depot.core.store.ScratchDirectory;
import dev.depot.server.DepotServer;
import dev.depot.server.ServerConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The overlapping-id workload: several Java ({@link OverlapWorker}) and Python ({@code overlap_worker.py})
 * processes put, get, hold, release and delete ids of one small shared namespace for a while, so that ids are
 * deleted and put again under views that others still hold. Every held view is checked against the put it was
 * got from, while held and before release: a view that shows another object's bytes, or a later put's, fails.
 * At the end, with every worker gone, nothing may be left pinned or unsealed.
 *
 * <pre>
 *   scripts/torture --overlap [--seconds 60] [--java 2] [--python 4] [--names 16]
 * </pre>
 */
public final class Overlap {
    static final long CAPACITY = 64L << 20;
    private static final Pattern RESULT = Pattern.compile(
        "RESULT gets=(\\d+) held=(\\d+) checks=(\\d+) failures=(\\d+)");

    /** Figures of one language's workers. */
    public record Side(int workers, long gets, long heldViews, long checks, long failures) {
        Side plus(long g, long h, long c, long f) {
            return new Side(workers + 1, gets + g, heldViews + h, checks + c, failures + f);
        }

        String json() {
            return "{\"workers\":" + workers + ",\"gets\":" + gets + ",\"held_views\":" + heldViews + ",\"checks\":"
                + checks + ",\"failures\":" + failures + "}";
        }
    }

    /** What a run found. */
    public record Result(Side java, Side python, List<String> problems) {
        public boolean ok() {
            return problems.isEmpty();
        }

        String json() {
            return "{\"workload\":\"overlap\",\"java\":" + java.json() + ",\"python\":" + python.json()
                + ",\"problems\":" + problems.size() + ",\"ok\":" + ok() + "}";
        }
    }

    private Overlap() {
    }

    public static void main(String[] args) throws Exception {
        int java = 2;
        int python = 4;
        int names = 16;
        long seconds = 60;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--overlap" -> { }
                case "--java" -> java = Integer.parseInt(args[++i]);
                case "--python" -> python = Integer.parseInt(args[++i]);
                case "--names" -> names = Integer.parseInt(args[++i]);
                case "--seconds" -> seconds = Long.parseLong(args[++i]);
                case "--minutes" -> seconds = 60 * Long.parseLong(args[++i]);
                default -> {
                    System.err.println("usage: torture --overlap [--seconds S | --minutes M] [--java J] [--python P]"
                        + " [--names N]");
                    System.exit(2);
                }
            }
        }
        Result r = run(java, python, names, seconds, System.nanoTime());
        r.problems().forEach(p -> System.out.println("PROBLEM " + p));
        System.out.println(r.json());
        System.exit(r.ok() ? 0 : 1);
    }

    /** Runs the workload; every worker is reaped and the store directory removed before it returns. */
    public static Result run(int javaWorkers, int pythonWorkers, int names, long seconds, long seed) throws Exception {
        SplittableRandom rnd = new SplittableRandom(seed);
        List<String> problems = new ArrayList<>();
        List<ChildProcess> java = new ArrayList<>();
        List<ChildProcess> python = new ArrayList<>();
        Side javaSide = new Side(0, 0, 0, 0, 0);
        Side pythonSide = new Side(0, 0, 0, 0, 0);
        try (ScratchDirectory scratch = new ScratchDirectory("depot-overlap");
             Python py = pythonWorkers > 0 ? new Python() : null;
             DepotServer server = DepotServer.start(ServerConfig.defaults().withDirectory(scratch.path())
                 .withCapacity(CAPACITY), msg -> { })) {
            try {
                String[] common = {scratch.path().toString(), Integer.toString(names), Long.toString(seconds)};
                for (int i = 0; i < javaWorkers; i++) {
                    java.add(new ChildProcess(OverlapWorker.class, common[0], common[1], common[2],
                        Long.toString(rnd.nextLong())));
                }
                for (int i = 0; i < pythonWorkers; i++) {
                    python.add(py.start("overlap_worker.py", common[0], common[1], common[2],
                        Long.toString(rnd.nextLong() & Long.MAX_VALUE)));
                }
                javaSide = collect("java", java, seconds, problems);
                pythonSide = collect("python", python, seconds, problems);
                checkNothingLeft(server.client(), problems);
            } finally {
                for (ChildProcess c : java) {
                    c.kill();
                }
                for (ChildProcess c : python) {
                    c.kill();
                }
            }
        }
        return new Result(javaSide, pythonSide, List.copyOf(problems));
    }

    private static Side collect(String language, List<ChildProcess> workers, long seconds, List<String> problems)
        throws InterruptedException {
        Side side = new Side(0, 0, 0, 0, 0);
        for (ChildProcess w : workers) {
            int status = w.waitFor(seconds + 120);
            boolean reported = false;
            for (String line; (line = w.lines.poll()) != null; ) {
                if (line.startsWith("CORRUPT") || line.startsWith("FAIL")) {
                    problems.add(language + " worker " + w.pid() + ": " + line);
                }
                Matcher m = RESULT.matcher(line);
                if (m.find()) {
                    reported = true;
                    side = side.plus(Long.parseLong(m.group(1)), Long.parseLong(m.group(2)), Long.parseLong(m.group(3)),
                        Long.parseLong(m.group(4)));
                }
            }
            if (status != 0 || !reported) {
                problems.add(language + " worker " + w.pid() + " exited with status " + status
                    + (reported ? "" : " without a RESULT line"));
            }
        }
        if (side.failures() > 0) {
            problems.add(language + ": " + side.failures() + " of " + side.checks() + " checks of " + side.heldViews()
                + " held views failed");
        }
        return side;
    }

    private static void checkNothingLeft(DepotClient depot, List<String> problems) throws InterruptedException {
        // The workers exited cleanly; what their deaths left is for the daemon to reclaim (within a second).
        long deadline = System.nanoTime() + 10_000_000_000L;
        StoreStats s = depot.stats();
        while ((s.clientCount() > 1 || s.pinnedBytes() != 0 || s.unsealedBytes() != 0
            || depot.list().stream().anyMatch(o -> o.state() == ObjectState.DELETE_PENDING))
            && System.nanoTime() < deadline) {
            Thread.sleep(20);
            s = depot.stats();
        }
        if (s.clientCount() > 1) {
            problems.add("clients left registered after every worker exited: " + (s.clientCount() - 1));
        }
        if (s.pinnedBytes() != 0) {
            problems.add("pins left after every worker exited: " + s.pinnedBytes() + " bytes");
        }
        if (s.unsealedBytes() != 0) {
            problems.add("unsealed bytes left after every worker exited: " + s.unsealedBytes());
        }
        for (ObjectInfo o : depot.list()) {
            if (o.state() != ObjectState.SEALED) {
                problems.add("object " + o.id() + " left in state " + o.state() + " with " + o.pinCount() + " pins");
            }
        }
        StoreClients.storeOf(depot).recover().forEach(p -> problems.add("recovery found: " + p));
    }
}
