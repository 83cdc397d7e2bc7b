package dev.depot.server.spill;

import static dev.depot.core.index.IndexEntryDescriptor.generation;
import static dev.depot.core.index.IndexEntryDescriptor.isKept;
import static dev.depot.core.index.IndexEntryDescriptor.state;
import static dev.depot.core.store.StoreHeaderDescriptor.SPILL_ERROR_IO;
import static dev.depot.core.store.StoreHeaderDescriptor.SPILL_ERROR_LIMIT;
import static dev.depot.core.store.StoreHeaderDescriptor.SPILL_ERROR_NOTHING_TO_SPILL;

import dev.depot.core.heap.HeapBlockDescriptor;
import dev.depot.core.index.EntryState;
import dev.depot.core.store.Spilling;
import dev.depot.core.store.Store;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The daemon's spiller: one thread that sleeps on the store's spill-request futex word and, when woken, restores
 * the spilled objects readers asked for and spills least-recently-used KEEP objects until the room waiting
 * creates asked for is free. All file I/O happens here, outside the allocator lock; the shared-memory steps are
 * {@link Spilling}'s.
 *
 * <p>Lifecycle: {@link #start} cleans the directory (temporary files, and files of entries that are no longer
 * spilled: a daemon killed between rename and commit leaves one), announces the directory in the store header
 * and starts the thread; {@link #close} stops it and withdraws the announcement.
 */
public final class Spiller implements AutoCloseable {
    private static final long IDLE_WAIT_NANOS = 200_000_000L;
    private static final long HOUSEKEEPING_NANOS = 1_000_000_000L;
    private static final int CANDIDATES = 16;
    /**
     * Fault injection for crash tests: {@code spill} pauses each spill after its temporary file is written,
     * {@code restore} each restore after its data is read, printing {@code "spill paused"} or
     * {@code "restore paused"} on stdout first, so that a test can kill the daemon right there.
     */
    public static final String TEST_PAUSE_PROP_NAME = "depot.spill.testPause";
    private static final String TEST_PAUSE = System.getProperty(TEST_PAUSE_PROP_NAME, "");

    private enum Outcome { SPILLED, SKIPPED, LIMIT, IO }

    private record Tracked(byte[] id, int generation) {
    }

    private final Spilling spilling;
    private final SpillFiles files;
    private final long limit;
    private final Consumer<String> log;
    /** Spill files by index slot: what this spiller (or the previous daemon's) wrote and has not removed. */
    private final Map<Integer, Tracked> tracked = new HashMap<>();
    private final Thread thread;
    private volatile boolean running = true;
    private long errorSince;

    private Spiller(Store store, Path dir, long limit, Consumer<String> log) throws IOException {
        this.spilling = store.spilling();
        this.files = new SpillFiles(dir);
        this.limit = limit;
        this.log = log;
        adoptDirectory();
        spilling.announce(dir.toAbsolutePath().toString(), limit);
        this.thread = Thread.ofPlatform().daemon().name("depot-spiller").unstarted(this::run);
    }

    /** Starts spilling the KEEP objects of {@code store} (the daemon's) to {@code dir}, at most {@code limit} bytes. */
    public static Spiller start(Store store, Path dir, long limit, Consumer<String> log) throws IOException {
        Spiller s = new Spiller(store, dir, limit, log);
        s.thread.start();
        return s;
    }

    /** Deletes temporary files and files no spilled entry owns; remembers the rest. */
    private void adoptDirectory() throws IOException {
        int kept = 0;
        int removed = 0;
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(files.directory())) {
            for (Path p : ds) {
                String name = p.getFileName().toString();
                long sg = SpillFileDescriptor.parseName(name);
                int slot = (int) (sg >>> 32);
                int generation = (int) sg;
                if (name.endsWith(SpillFileDescriptor.TEMPORARY_SUFFIX) || sg >= 0 && !spilling.isSpilled(slot, generation)) {
                    Files.deleteIfExists(p);
                    removed++;
                } else if (sg >= 0) {
                    tracked.put(slot, new Tracked(spilling.id(slot), generation));
                    kept++;
                }
            }
        }
        if (kept + removed > 0) {
            log.accept("spill directory " + files.directory() + ": " + kept + " spilled object(s) kept, " + removed
                + " stale file(s) removed");
        }
    }

    private void run() {
        long lastHousekeeping = System.nanoTime();
        while (running) {
            int sequence = spilling.requestSequence();
            boolean worked = false;
            try {
                worked = round();
                if (System.nanoTime() - lastHousekeeping > HOUSEKEEPING_NANOS) {
                    housekeeping();
                    lastHousekeeping = System.nanoTime();
                }
            } catch (RuntimeException e) {
                if (running) {
                    log.accept("spiller: " + e);
                }
            }
            if (!worked && running) {
                spilling.awaitRequest(sequence, IDLE_WAIT_NANOS);
            }
        }
    }

    /** Serves the restore requests, then the spill request. True when there was something to do. */
    private boolean round() {
        boolean worked = false;
        for (int slot : spilling.restoreWanted()) {
            restore(slot);
            worked = true;
        }
        long wanted = spilling.wantedBytes();
        if (wanted > 0) {
            spillFor(wanted, -1);
            spilling.served(wanted);
            worked = true;
        }
        return worked;
    }

    /**
     * Spills least-recently-used KEEP objects until a block of {@code blockSize} bytes fits. Reports why not in
     * the header (waiting creates then fail with that reason) and returns false when it cannot.
     */
    private boolean spillFor(long blockSize, int notSlot) {
        while (!spilling.hasRoomFor(blockSize)) {
            int spilled = 0;
            for (int slot : spilling.spillCandidates(CANDIDATES)) {
                if (slot == notSlot) {
                    continue;
                }
                Outcome o = spillOne(slot);
                if (o == Outcome.LIMIT || o == Outcome.IO) {
                    setError(o == Outcome.LIMIT ? SPILL_ERROR_LIMIT : SPILL_ERROR_IO);
                    return false;
                }
                if (o == Outcome.SPILLED) {
                    spilled++;
                    if (spilling.hasRoomFor(blockSize)) {
                        break;
                    }
                }
            }
            if (spilled == 0) {
                setError(SPILL_ERROR_NOTHING_TO_SPILL);
                return false;
            }
        }
        setError(0);
        return true;
    }

    private Outcome spillOne(int slot) {
        long sw = spilling.stateWord(slot);
        if (state(sw) != EntryState.SEALED || !isKept(sw)) {
            return Outcome.SKIPPED;
        }
        int generation = generation(sw);
        byte[] id = spilling.id(slot);
        long dataLength = spilling.dataLength(slot);
        int metadataLength = spilling.metadataLength(slot);
        if (spilling.stateWord(slot) != sw) {
            return Outcome.SKIPPED;  // the fields above may belong to another object
        }
        if (spilling.spilledBytes() + HeapBlockDescriptor.blockSizeFor(dataLength, metadataLength) > limit) {
            return Outcome.LIMIT;
        }
        try {
            Path tmp = files.writeTemporary(id, slot, generation, dataLength, metadataLength, spilling.contents(slot));
            pauseForTest("spill");
            files.publish(tmp);
        } catch (IOException e) {
            log.accept("cannot spill to " + files.directory() + ": " + e);
            return Outcome.IO;
        }
        // The file was written from the heap while SEALED; the CAS in commitSpill proves the object stayed the same.
        if (!spilling.commitSpill(slot, sw)) {
            deleteQuietly(id, slot, generation);
            return Outcome.SKIPPED;
        }
        tracked.put(slot, new Tracked(id, generation));
        return Outcome.SPILLED;
    }

    private void restore(int slot) {
        long wanted = spilling.stateWord(slot);
        if (state(wanted) != EntryState.RESTORE_WANTED) {
            return;
        }
        int generation = generation(wanted);
        byte[] id = spilling.id(slot);
        long dataLength = spilling.dataLength(slot);
        int metadataLength = spilling.metadataLength(slot);
        long restoring = Spilling.NO_ROOM;
        for (int attempt = 0; restoring == Spilling.NO_ROOM; attempt++) {
            restoring = spilling.beginRestore(slot, wanted);
            if (restoring == Spilling.GONE) {
                return;
            }
            if (restoring != Spilling.NO_ROOM) {
                break;
            }
            if (attempt == 8 || !spillFor(HeapBlockDescriptor.blockSizeFor(dataLength, metadataLength), slot)) {
                log.accept("cannot restore a spilled object of " + dataLength + " bytes: no room in the store");
                return;
            }
        }
        try {
            files.read(id, slot, generation, dataLength, metadataLength, spilling.contents(slot));
        } catch (IOException e) {
            log.accept("lost spilled object: " + e + "; its entry is dropped");
            spilling.dropLost(slot, restoring);
            deleteQuietly(id, slot, generation);
            tracked.remove(slot);
            return;
        }
        pauseForTest("restore");
        spilling.finishRestore(slot, restoring);
        deleteQuietly(id, slot, generation);
        tracked.remove(slot);
    }

    /** Removes files whose entries were deleted; lets creates ask again a second after an error. */
    private void housekeeping() {
        tracked.entrySet().removeIf(e -> {
            if (spilling.isSpilled(e.getKey(), e.getValue().generation())) {
                return false;
            }
            deleteQuietly(e.getValue().id(), e.getKey(), e.getValue().generation());
            return true;
        });
        if (errorSince != 0 && System.nanoTime() - errorSince > HOUSEKEEPING_NANOS) {
            setError(0);
        }
    }

    private static void pauseForTest(String point) {
        if (TEST_PAUSE.equals(point)) {
            System.out.println(point + " paused");
            System.out.flush();
            try {
                Thread.sleep(60_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void setError(int code) {
        errorSince = code == 0 ? 0 : (errorSince == 0 ? System.nanoTime() : errorSince);
        spilling.setError(code);
    }

    private void deleteQuietly(byte[] id, int slot, int generation) {
        try {
            files.delete(id, slot, generation);
        } catch (IOException e) {
            log.accept("cannot remove spill file of slot " + slot + ": " + e);
        }
    }

    /** Stops the thread (it finishes the file it is on) and withdraws the spill directory from the header. */
    @Override
    public void close() {
        running = false;
        spilling.wake();
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        spilling.withdraw();
    }
}
