package dev.depot.bench;

import static dev.depot.core.index.IndexEntryDescriptor.ENTRY_LENGTH;
import static dev.depot.core.index.IndexEntryDescriptor.ID_OFFSET;
import static dev.depot.core.index.IndexEntryDescriptor.ID_W1_POSITION;
import static dev.depot.core.index.IndexEntryDescriptor.LAST_ACCESS_OFFSET;
import static dev.depot.core.index.IndexEntryDescriptor.entryOffset;

import dev.depot.core.index.ObjectIndex;
import dev.depot.core.store.ScratchDirectory;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.function.LongFunction;
import java.util.function.LongSupplier;
import org.HdrHistogram.Histogram;

/**
 * The shared-memory accesses of a get + release, alone: the floor under the scale benchmark's get. A get touches
 * one random place, the id's index entry: it reads the entries from the id's home slot on (linear probing, one
 * 64-byte line each) until the id matches, and its release stores the entry's last use into the same line. The
 * pin record, the operation counter and the header word it also touches are this process's own hot lines, and a
 * get does not read the heap (the view is sliced from the entry's block offset and lengths).
 *
 * <p>This floor lays the same ids out in a mapping of the index's size in /dev/shm, with the store's home function
 * and probing, so each id sits as many slots from its home as in the store; then it times, one id at a time as the
 * benchmark times a get, the read of each entry's id from the home slot to the id's slot (each read's address
 * known only after the previous one's compare) and the store of a last use into the entry. Closing unmaps it.
 */
final class LookupFloor implements AutoCloseable {
    private static final ValueLayout.OfLong LONG_LE = ValueLayout.JAVA_LONG.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final long PAGE = 4096;

    private final ScratchDirectory dir;
    private final Arena arena;
    private final MemorySegment entries;
    private final ObjectIndex homes;
    private final boolean[] taken;
    private final int mask;
    private long inserted;
    private long lines;

    /** A floor for an index of {@code slots} entries (a power of two), every page resident, no id in it. */
    LookupFloor(int slots) throws IOException {
        this.dir = new ScratchDirectory(BenchStore.prefix() + "floor-");
        this.arena = Arena.ofShared();
        long length = (long) slots * ENTRY_LENGTH;
        Path file = dir.path().resolve("index");
        Files.createDirectories(dir.path());
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(new byte[1]), length - 1);
            this.entries = ch.map(FileChannel.MapMode.READ_WRITE, 0, length, arena);
        }
        for (long p = 0; p < length; p += PAGE) {
            entries.set(ValueLayout.JAVA_LONG, p, 0L); // resident, as a store's index is
        }
        this.homes = new ObjectIndex(entries, slots);
        this.taken = new boolean[slots];
        this.mask = slots - 1;
    }

    /** The scratch directory that holds the mapped file; removed by {@link #close}. */
    Path directory() {
        return dir.path();
    }

    /** Places an id (20 bytes) in the first free slot from its home, as the store's index does. */
    void insert(byte[] id) {
        ByteBuffer b = ByteBuffer.wrap(id).order(ByteOrder.LITTLE_ENDIAN);
        long w0 = b.getLong(0);
        int slot = homes.home(w0, b.getLong(ID_W1_POSITION));
        long probed = 1;
        while (taken[slot]) {
            slot = (slot + 1) & mask;
            probed++;
        }
        taken[slot] = true;
        entries.set(LONG_LE, entryOffset(slot) + ID_OFFSET, w0);
        inserted++;
        lines += probed;
    }

    /** Mean entries a lookup of an inserted id reads (1 when every id sits at its home). */
    double linesPerLookup() {
        return (double) lines / Math.max(1, inserted);
    }

    /**
     * The p50 in nanoseconds of the lookup and use record of {@code samples} ids, each made by {@code ids} from a
     * number drawn by {@code draw} (the same draws as the benchmark's gets); every id must have been inserted.
     * Ids are told apart by their first word, so those of one floor must differ in it.
     */
    long p50Nanos(int samples, LongSupplier draw, LongFunction<byte[]> ids) {
        Histogram h = Latencies.histogram();
        for (int i = 0; i < samples; i++) {
            ByteBuffer b = ByteBuffer.wrap(ids.apply(draw.getAsLong())).order(ByteOrder.LITTLE_ENDIAN);
            long w0 = b.getLong(0);
            long w1 = b.getLong(ID_W1_POSITION);
            long t0 = System.nanoTime();
            int slot = homes.home(w0, w1);
            for (int probe = 0; entries.get(LONG_LE, entryOffset(slot) + ID_OFFSET) != w0; probe++) {
                if (probe > mask) {
                    throw new IllegalArgumentException("id with first word " + w0 + " was not inserted");
                }
                slot = (slot + 1) & mask;
            }
            entries.set(ValueLayout.JAVA_LONG, entryOffset(slot) + LAST_ACCESS_OFFSET, t0);
            Latencies.record(h, System.nanoTime() - t0);
        }
        return h.getValueAtPercentile(50);
    }

    @Override
    public void close() {
        try {
            arena.close();
        } finally {
            dir.close();
        }
    }
}
