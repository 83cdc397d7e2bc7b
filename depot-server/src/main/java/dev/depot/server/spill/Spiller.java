package dev.depot.server.spill;

import static dev.depot.core.index.IndexEntryDescriptor.generation;
import static dev.depot.core.index.IndexEntryDescriptor.isKept;
import static dev.depot.core.index.IndexEntryDescriptor.state;
import static dev.depot.core.store.StoreHeaderDescriptor.SPILL_ERROR_IO;
import static dev.depot.core.store.StoreHeaderDescriptor.SPILL_ERROR_LIMIT;
import static dev.depot.core.store.StoreHeaderDescriptor.SPILL_ERROR_NOTHING_TO_SPILL;

import dev.depot.core.heap.HeapBlockDescriptor;
import dev.depot.core.index.EntryState;
import dev.depot.core.store.RestoreFailureDescriptor;
import dev.depot.core.store.Spilling;
import dev.depot.core.store.Store;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The daemon's spiller: one thread that sleeps on the store's spill-request futex word and, when woken, restores
 * the spilled objects readers asked for and spills least-recently-used KEEP objects until the room waiting
 * creates asked for is free. All file I/O happens here, outside the allocator lock; the shared-memory steps are
 * {@link Spilling}'s.
 *
 * <p>A restored object keeps its file (objects are immutable, and the file is named for its slot and
 * generation): when it is spilled again, nothing is written, only its memory is freed. Such a file of a
 * resident object is a copy, counted in {@link #fileBytes} (against the limit) but not in the store's spilled
 * bytes; copies are the first files removed when the limit is near, and a file goes within a second of its
 * object's delete ({@link #housekeeping}).
 *
 * <p>Files are written under a temporary name and renamed when whole, without {@code fsync}: the store lives
 * in memory ({@code /dev/shm}) and does not outlive the machine, so the files only need to survive the
 * daemon's crash, which the page cache does. A crash leaves whole files or temporary ones, never a torn file
 * under a final name.
 *
 * <p>Failures: a restore checks the file's header and CRC32C ({@link SpillFiles#read}); a missing or damaged
 * file makes the object lost (its entry is dropped), and a store without room leaves it spilled, tried again
 * after a back-off ({@link #FIRST_RETRY_NANOS} doubling to {@link #MAX_RETRY_NANOS}). Either way the reason
 * goes into the store header's restore failure records before the waiting gets are woken, so they fail with
 * it. A failed spill write (a full disk) stops spill writes for the same kind of back-off; meanwhile creates
 * that need a spill fail at once. Repeated conditions are logged once per {@link LogLimiter#INTERVAL_NANOS}.
 *
 * <p>Lifecycle: {@link #start} cleans the directory (temporary files, and files of entries that are gone: a
 * daemon killed between rename and commit, or before a deleted object's file was removed, leaves one), keeps
 * the files of live KEEP objects (spilled ones, and copies of resident ones), announces the directory in the
 * store header and starts the thread; {@link #close} stops it and withdraws the announcement.
 */
public final class Spiller implements AutoCloseable {
    private static final long IDLE_WAIT_NANOS = 200_000_000L;
    private static final long HOUSEKEEPING_NANOS = 1_000_000_000L;
    private static final int CANDIDATES = 16;
    /** First and longest pause before a failed restore (no room) or spill write (disk full) is tried again. */
    static final long FIRST_RETRY_NANOS = 10_000_000L;
    static final long MAX_RETRY_NANOS = 1_000_000_000L;
    /**
     * Fault injection for crash tests: {@code spill} pauses each spill after its temporary file is written,
     * {@code restore} each restore after its data is read, printing {@code "spill paused"} or
     * {@code "restore paused"} on stdout first, so that a test can kill the daemon right there.
     */
    public static final String TEST_PAUSE_PROP_NAME = "depot.spill.testPause";
    private static final String TEST_PAUSE = System.getProperty(TEST_PAUSE_PROP_NAME, "");

    private enum Outcome { SPILLED, MADE_ROOM, SKIPPED, LIMIT, IO }

    private record Tracked(byte[] id, int generation, long bytes) {
    }

    /** A restore that found no room, tried again at {@code at} (nanoTime), after {@code delay}. */
    private record Retry(int generation, long at, long delay) {
    }

    private final Spilling spilling;
    private final SpillFiles files;
    private final long limit;
    private final Consumer<String> log;
    private final LogLimiter limitedLog;
    /** Restores waiting out their back-off, by slot. */
    private final Map<Integer, Retry> retries = new HashMap<>();
    /** No spill file is written before this (nanoTime) after a failed write; 0: none failed. */
    private long writeRetryAt;
    private long writeRetryDelay;
    /**
     * Spill files by index slot: what this spiller (or the previous daemon's) wrote and has not removed, of
     * spilled objects and of resident ones restored from them.
     */
    private final Map<Integer, Tracked> tracked = new HashMap<>();
    /** Block bytes of the objects in {@link #tracked}: what the directory holds, checked against the limit. */
    private long fileBytes;
    private final Thread thread;
    private volatile boolean running = true;
    private long errorSince;

    private Spiller(Store store, Path dir, long limit, Consumer<String> log) throws IOException {
        this.spilling = store.spilling();
        this.files = new SpillFiles(dir);
        this.limit = limit;
        this.log = log;
        this.limitedLog = new LogLimiter(log);
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

    /** Deletes temporary files and files no live KEEP entry owns; remembers the rest. */
    private void adoptDirectory() throws IOException {
        int kept = 0;
        int removed = 0;
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(files.directory())) {
            for (Path p : ds) {
                String name = p.getFileName().toString();
                long sg = SpillFileDescriptor.parseName(name);
                int slot = (int) (sg >>> 32);
                int generation = (int) sg;
                if (name.endsWith(SpillFileDescriptor.TEMPORARY_SUFFIX) || sg >= 0 && !spilling.isKeptObject(slot, generation)) {
                    Files.deleteIfExists(p);
                    removed++;
                } else if (sg >= 0) {
                    track(slot, spilling.id(slot), generation,
                        HeapBlockDescriptor.blockSizeFor(spilling.dataLength(slot), spilling.metadataLength(slot)));
                    kept++;
                }
            }
        }
        if (kept + removed > 0) {
            log.accept("spill directory " + files.directory() + ": " + kept + " file(s) of kept objects adopted, "
                + removed + " stale file(s) removed");
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
                spilling.awaitRequest(sequence, idleWaitNanos());
            }
        }
    }

    /** How long to sleep when idle: until the next restore retry is due, at most {@link #IDLE_WAIT_NANOS}. */
    private long idleWaitNanos() {
        long now = System.nanoTime();
        long wait = IDLE_WAIT_NANOS;
        for (Retry r : retries.values()) {
            wait = Math.min(wait, Math.max(1, r.at() - now));
        }
        return wait;
    }

    /**
     * Serves the restore requests (but not those waiting out a back-off), then the spill request. True when
     * there was something to do.
     */
    private boolean round() {
        boolean worked = false;
        long now = System.nanoTime();
        int[] wantedSlots = spilling.restoreWanted();
        retries.keySet().retainAll(Arrays.stream(wantedSlots).boxed().toList());
        for (int slot : wantedSlots) {
            Retry r = retries.get(slot);
            if (r != null && r.generation() == generation(spilling.stateWord(slot)) && now - r.at() < 0) {
                continue;
            }
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
     * the header (waiting creates then fail with that reason) and returns false when it cannot. The spill
     * whose free made the room ends it, whoever takes the room next: asking again after the commit would find
     * it taken by the create it was made for, and spill one object more than needed.
     */
    private boolean spillFor(long blockSize, int notSlot) {
        while (!spilling.hasRoomFor(blockSize)) {
            int spilled = 0;
            for (int slot : withFilesFirst(spilling.spillCandidates(CANDIDATES))) {
                if (slot == notSlot) {
                    continue;
                }
                Outcome o = spillOne(slot, blockSize);
                if (o == Outcome.LIMIT || o == Outcome.IO) {
                    setError(o == Outcome.LIMIT ? SPILL_ERROR_LIMIT : SPILL_ERROR_IO);
                    return false;
                }
                if (o == Outcome.MADE_ROOM) {
                    setError(0);
                    return true;
                }
                if (o == Outcome.SPILLED) {
                    spilled++;
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

    /**
     * The candidates (least recently used first) with those whose file is already on disk moved to the front,
     * in their order: spilling them writes nothing.
     */
    private int[] withFilesFirst(int[] candidates) {
        int[] out = new int[candidates.length];
        int n = 0;
        for (int slot : candidates) {
            if (tracked.containsKey(slot)) {
                out[n++] = slot;
            }
        }
        for (int slot : candidates) {
            if (!tracked.containsKey(slot)) {
                out[n++] = slot;
            }
        }
        return out;
    }

    /**
     * Spills the object in {@code slot} if it is a sealed KEEP object; says whether that made room for a block of
     * {@code roomFor} bytes.
     */
    private Outcome spillOne(int slot, long roomFor) {
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
        Tracked copy = tracked.get(slot);
        if (copy != null && copy.generation() == generation && Arrays.equals(copy.id(), id)) {
            // Restored from this file earlier, and unchanged since (immutable): only the memory goes.
            return outcomeOf(spilling.commitSpill(slot, sw, roomFor));
        }
        if (copy != null) {
            untrack(slot);  // the file of an object deleted since, whose slot this one reuses
        }
        long bytes = HeapBlockDescriptor.blockSizeFor(dataLength, metadataLength);
        if (fileBytes + bytes > limit && !dropCopies(fileBytes + bytes - limit)) {
            return Outcome.LIMIT;
        }
        if (writeRetryAt != 0 && System.nanoTime() - writeRetryAt < 0) {
            return Outcome.IO;  // the last write failed moments ago: creates fail with that reason meanwhile
        }
        try {
            Path tmp = files.writeTemporary(id, slot, generation, dataLength, metadataLength, spilling.contents(slot));
            pauseForTest("spill");
            files.publish(tmp);
        } catch (IOException e) {
            spilling.countSpillFailure();
            writeRetryDelay = writeRetryDelay == 0 ? FIRST_RETRY_NANOS : Math.min(2 * writeRetryDelay, MAX_RETRY_NANOS);
            writeRetryAt = System.nanoTime() + writeRetryDelay;
            limitedLog.log("spill write", "cannot spill to " + files.directory() + ": " + e
                + "; spill files are tried again after a pause of up to " + MAX_RETRY_NANOS / 1_000_000 + " ms");
            return Outcome.IO;
        }
        writeRetryAt = 0;
        writeRetryDelay = 0;
        track(slot, id, generation, bytes);
        // The file was written from the heap while SEALED; the CAS in commitSpill proves the object stayed the same.
        // If it fails (pinned meanwhile, or deleted), the file stays a copy of a resident object, or housekeeping
        // removes it.
        return outcomeOf(spilling.commitSpill(slot, sw, roomFor));
    }

    private static Outcome outcomeOf(Spilling.Commit c) {
        return switch (c) {
            case REFUSED -> Outcome.SKIPPED;
            case SPILLED -> Outcome.SPILLED;
            case MADE_ROOM -> Outcome.MADE_ROOM;
        };
    }

    /**
     * Removes files no longer needed (of deleted objects, then copies of resident objects) until {@code bytes}
     * are gone; false when the files of spilled objects alone leave less room than that.
     */
    private boolean dropCopies(long bytes) {
        housekeepFiles();
        long freed = 0;
        var it = tracked.entrySet().iterator();
        while (it.hasNext() && freed < bytes) {
            var e = it.next();
            long sw = spilling.stateWord(e.getKey());
            if (state(sw) == EntryState.SEALED && generation(sw) == e.getValue().generation()) {
                // A resident object's copy: only the spiller spills, so it cannot become spilled meanwhile.
                deleteQuietly(e.getValue().id(), e.getKey(), e.getValue().generation());
                fileBytes -= e.getValue().bytes();
                freed += e.getValue().bytes();
                it.remove();
            }
        }
        return freed >= bytes;
    }

    private void track(int slot, byte[] id, int generation, long bytes) {
        Tracked old = tracked.put(slot, new Tracked(id, generation, bytes));
        fileBytes += bytes - (old == null ? 0 : old.bytes());
    }

    private void untrack(int slot) {
        Tracked t = tracked.remove(slot);
        if (t != null) {
            deleteQuietly(t.id(), slot, t.generation());
            fileBytes -= t.bytes();
        }
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
        long blockSize = HeapBlockDescriptor.blockSizeFor(dataLength, metadataLength);
        long restoring = Spilling.NO_ROOM;
        for (int attempt = 0; restoring == Spilling.NO_ROOM; attempt++) {
            restoring = spilling.beginRestore(slot, wanted);
            if (restoring == Spilling.GONE) {
                retries.remove(slot);
                return;
            }
            if (restoring != Spilling.NO_ROOM) {
                break;
            }
            if (attempt == 8 || !spillFor(blockSize, slot)) {
                noRoomToRestore(slot, generation, id, blockSize);
                return;
            }
        }
        try {
            files.read(id, slot, generation, dataLength, metadataLength, spilling.contents(slot));
        } catch (IOException e) {
            String reason = e instanceof SpillFiles.DamagedException d ? d.reason()
                : "reading spill file " + files.path(id, slot, generation).getFileName() + " failed: " + e;
            // Each lost object is logged: it happens once per object, never in a loop.
            log.accept("lost spilled object " + HexFormat.of().formatHex(id) + ": " + e + "; its entry is dropped");
            // Recorded before the drop, whose wake-up sends the waiting gets to read it.
            spilling.recordRestoreFailure(slot, generation, id, RestoreFailureDescriptor.KIND_LOST, reason);
            spilling.dropLost(slot, restoring);
            deleteQuietly(id, slot, generation);
            untrack(slot);
            retries.remove(slot);
            return;
        }
        pauseForTest("restore");
        spilling.finishRestore(slot, restoring);
        if (retries.remove(slot) != null) {
            spilling.clearRestoreFailure(slot, generation);
        }
        // The file stays: it is still the object's data, so spilling it again writes nothing.
    }

    /**
     * A restore found no room, even after spilling others: the object stays spilled, the gets waiting for it
     * learn why (they fail with it at their timeout), and it is tried again after a pause that doubles up to
     * {@link #MAX_RETRY_NANOS}.
     */
    private void noRoomToRestore(int slot, int generation, byte[] id, long blockSize) {
        Retry last = retries.get(slot);
        long delay = last == null || last.generation() != generation ? FIRST_RETRY_NANOS
            : Math.min(2 * last.delay(), MAX_RETRY_NANOS);
        retries.put(slot, new Retry(generation, System.nanoTime() + delay, delay));
        String why = switch (spilling.error()) {
            case SPILL_ERROR_IO -> "writing spill files to make room failed (is the spill disk full?)";
            case SPILL_ERROR_LIMIT -> "the spill directory is at its --spill-limit";
            default -> "everything else in it is pinned or being written";
        };
        String reason = "the store has no room for its " + blockSize + "-byte block and the daemon could not make"
            + " any: " + why + "; release or delete objects, or raise --capacity";
        if (last == null) {
            spilling.recordRestoreFailure(slot, generation, id, RestoreFailureDescriptor.KIND_NO_ROOM, reason);
        }
        limitedLog.log("restore no room", "cannot restore spilled object " + HexFormat.of().formatHex(id) + ": "
            + reason + "; trying again in " + delay / 1_000_000 + " ms");
    }

    /** Removes files whose objects were deleted; lets creates ask again a second after an error. */
    private void housekeeping() {
        housekeepFiles();
        if (errorSince != 0 && System.nanoTime() - errorSince > HOUSEKEEPING_NANOS) {
            setError(0);
        }
    }

    /** Removes the files of objects deleted since they were written (spilled or resident). */
    private void housekeepFiles() {
        tracked.entrySet().removeIf(e -> {
            if (spilling.isKeptObject(e.getKey(), e.getValue().generation())) {
                return false;
            }
            deleteQuietly(e.getValue().id(), e.getKey(), e.getValue().generation());
            fileBytes -= e.getValue().bytes();
            return true;
        });
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
