package dev.depot.bench;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectView;
import dev.depot.client.ObjectWriter;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * N reader processes hold (and touch every page of) the same object; their total proportional set size (PSS,
 * from {@code /proc/PID/smaps_rollup}) grows by about one copy. Baseline: N processes that each hold their own
 * heap copy. A child writes the object and exits first, so only the readers map its pages.
 */
final class ShareBench implements Benchmark {
    static final String WRITER_ROLE = "share-writer";
    static final String READER_ROLE = "share-reader";
    static final String COPY_ROLE = "share-copy";
    private static final ObjectId ID = ObjectId.of("depot-bench/share");
    private static final int READERS = 4;
    private static final int PAGE = 4096;

    @Override
    public String name() {
        return "share";
    }

    @Override
    public String description() {
        return "total PSS of N processes holding one object vs N processes each with its own heap copy";
    }

    @Override
    public void run(boolean quick, Consumer<Result> out) throws Exception {
        long size = quick ? 64 * Units.MIB : Units.GIB;
        try (BenchStore store = BenchStore.start(size + 16 * Units.MIB)) {
            String dir = store.dir().toString();
            try (Child writer = Child.start(WRITER_ROLE, 64, dir, Long.toString(size))) {
                writer.awaitLine("DONE", 120);
                writer.awaitExit(30);
            }
            long[] depot = extraPss(READER_ROLE, 128, dir, size);
            long[] copy = extraPss(COPY_ROLE, (int) (2 * size / Units.MIB + 128), dir, size);
            Map<String, Object> figures = new LinkedHashMap<>();
            figures.put("readers", READERS);
            figures.put("size_mib", Units.mib(size));
            figures.put("idle_pss_mib_total", Units.mib(depot[0]));
            figures.put("holding_pss_mib_total", Units.mib(depot[1]));
            figures.put("extra_pss_mib_total", Units.mib(depot[1] - depot[0]));
            Map<String, Object> baseline = new LinkedHashMap<>();
            baseline.put("kind", "each process holds its own heap copy (byte[])");
            baseline.put("idle_pss_mib_total", Units.mib(copy[0]));
            baseline.put("holding_pss_mib_total", Units.mib(copy[1]));
            baseline.put("extra_pss_mib_total", Units.mib(copy[1] - copy[0]));
            double depotExtra = depot[1] - depot[0];
            out.accept(new Result(name(), READERS + " readers of " + Units.size(size), figures, baseline,
                (copy[1] - copy[0]) / depotExtra, "extra PSS of all readers <= 1.1x one copy",
                depotExtra <= 1.1 * size));
        }
    }

    /** Starts the readers; returns their total PSS in bytes idle and while holding the object. */
    private static long[] extraPss(String role, int heapMiB, String dir, long size) throws IOException {
        List<Child> readers = new ArrayList<>();
        try {
            for (int i = 0; i < READERS; i++) {
                readers.add(Child.start(role, heapMiB, dir, Long.toString(size)));
            }
            long idle = 0;
            for (Child c : readers) {
                c.awaitLine("IDLE", 60);
                idle += pss(c.pid());
            }
            for (Child c : readers) {
                c.send("HOLD");
                c.awaitLine("HOLDING", 120);
            }
            long holding = 0;
            for (Child c : readers) {
                holding += pss(c.pid());
            }
            for (Child c : readers) {
                c.send("EXIT");
            }
            for (Child c : readers) {
                c.awaitExit(30);
            }
            return new long[] {idle, holding};
        } finally {
            Child.closeAll(readers);
        }
    }

    /** The {@code Pss:} line of {@code /proc/PID/smaps_rollup}, in bytes. */
    static long pss(long pid) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "smaps_rollup"))) {
            if (line.startsWith("Pss:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
            }
        }
        throw new IOException("no Pss line in /proc/" + pid + "/smaps_rollup");
    }

    /** Child: {@code DIR SIZE}. */
    static void child(String role, String[] args, ChildIo io) {
        Path dir = Path.of(args[0]);
        long size = Long.parseLong(args[1]);
        switch (role) {
            case WRITER_ROLE -> {
                try (DepotClient client = DepotClient.open(dir); ObjectWriter w = client.create(ID, size)) {
                    w.data().fill((byte) 3);
                    w.seal();
                }
                io.say("DONE");
            }
            case READER_ROLE -> {
                try (DepotClient client = DepotClient.open(dir)) {
                    io.say("IDLE");
                    io.expect("HOLD");
                    try (ObjectView v = client.get(ID, 10_000)) {
                        io.say("HOLDING sum=" + touch(v.data()));
                        io.expect("EXIT");
                    }
                }
            }
            default -> {
                io.say("IDLE");
                io.expect("HOLD");
                byte[] copy = new byte[(int) size];
                java.util.Arrays.fill(copy, (byte) 3);
                io.say("HOLDING sum=" + touch(MemorySegment.ofArray(copy)));
                io.expect("EXIT");
                if (copy[0] != 3) {
                    throw new AssertionError();
                }
            }
        }
    }

    /** Reads one byte of every page, so every page is mapped into this process. */
    private static long touch(MemorySegment d) {
        long sum = 0;
        for (long off = 0; off < d.byteSize(); off += PAGE) {
            sum += d.get(ValueLayout.JAVA_BYTE, off);
        }
        return sum;
    }
}
