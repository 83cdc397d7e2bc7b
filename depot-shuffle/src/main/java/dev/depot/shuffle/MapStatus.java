package dev.depot.shuffle;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectView;
import dev.depot.core.sys.ProcessIdentity;
import dev.depot.errors.ObjectExistsException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * A map's status record ({@link MapStatusDescriptor}): written by its writer, awaited by readers. Immutable.
 */
final class MapStatus {
    /** How often a reader waiting for a map checks that the map's process still lives. */
    static final long LIVENESS_CHECK_MILLIS = 100;

    private static final java.lang.foreign.ValueLayout.OfInt INT = JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final java.lang.foreign.ValueLayout.OfLong LONG = JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    final int map;
    final boolean committed;
    final long writer;
    final long[] lengths;
    final String message;

    private MapStatus(int map, boolean committed, long writer, long[] lengths, String message) {
        this.map = map;
        this.committed = committed;
        this.writer = writer;
        this.lengths = lengths;
        this.message = message;
    }

    /** Byte offset of {@code partition}'s slice in the map's data object (PER_MAP layout). */
    long offsetOf(int partition) {
        long offset = 0;
        for (int p = 0; p < partition; p++) {
            offset += lengths[p];
        }
        return offset;
    }

    static void putOwner(DepotClient client, ShuffleIds ids, int map) {
        MemorySegment record = MemorySegment.ofArray(new byte[MapStatusDescriptor.OWNER_LENGTH]);
        record.set(LONG, MapStatusDescriptor.OWNER_IDENTITY_OFFSET, ProcessIdentity.self());
        try {
            Shuffle.putRecord(client, ids.owner(map), record);
        } catch (ObjectExistsException e) {
            throw new IllegalStateException("map " + map + " already has a writer (" + describeOwner(client, ids, map)
                + "); a map is written once per shuffle", e);
        }
    }

    static void put(DepotClient client, ShuffleIds ids, int map, boolean committed, long[] lengths, String message) {
        byte[] text = message.getBytes(StandardCharsets.UTF_8);
        int n = Math.min(text.length, MapStatusDescriptor.MAX_MESSAGE_LENGTH);
        int partitions = lengths.length;
        MemorySegment r = MemorySegment.ofArray(new byte[(int) MapStatusDescriptor.length(partitions, n)]);
        r.set(INT, MapStatusDescriptor.MAGIC_OFFSET, MapStatusDescriptor.MAGIC);
        r.set(INT, MapStatusDescriptor.STATE_OFFSET,
            committed ? MapStatusDescriptor.STATE_COMMITTED : MapStatusDescriptor.STATE_FAILED);
        r.set(LONG, MapStatusDescriptor.WRITER_OFFSET, ProcessIdentity.self());
        r.set(INT, MapStatusDescriptor.MAP_OFFSET, map);
        r.set(INT, MapStatusDescriptor.PARTITIONS_OFFSET, partitions);
        for (int p = 0; p < partitions; p++) {
            r.set(LONG, MapStatusDescriptor.lengthOffset(p), lengths[p]);
        }
        long at = MapStatusDescriptor.messageLengthOffset(partitions);
        r.set(INT, at, n);
        MemorySegment.copy(MemorySegment.ofArray(text), 0, r, at + Integer.BYTES, n);
        Shuffle.putRecord(client, ids.status(map), r);
    }

    /** Parses a status record; every length is checked against the object's size. */
    static MapStatus decode(MemorySegment r, int map, int partitions) {
        long size = r.byteSize();
        if (size < MapStatusDescriptor.LENGTHS_OFFSET || r.get(INT, MapStatusDescriptor.MAGIC_OFFSET) != MapStatusDescriptor.MAGIC) {
            throw new IllegalStateException("the status record of map " + map + " (" + size + " bytes) is not a"
                + " shuffle status record (magic DSM1)");
        }
        int state = r.get(INT, MapStatusDescriptor.STATE_OFFSET);
        int recordMap = r.get(INT, MapStatusDescriptor.MAP_OFFSET);
        int recordPartitions = r.get(INT, MapStatusDescriptor.PARTITIONS_OFFSET);
        if (recordMap != map || recordPartitions != partitions
            || size < MapStatusDescriptor.length(partitions, 0)
            || (state != MapStatusDescriptor.STATE_COMMITTED && state != MapStatusDescriptor.STATE_FAILED)) {
            throw new IllegalStateException("the status record of map " + map + " is inconsistent: map " + recordMap
                + ", " + recordPartitions + " partitions (expected " + partitions + "), state " + state + ", " + size
                + " bytes");
        }
        long[] lengths = new long[partitions];
        for (int p = 0; p < partitions; p++) {
            lengths[p] = r.get(LONG, MapStatusDescriptor.lengthOffset(p));
            if (lengths[p] < 0) {
                throw new IllegalStateException("the status record of map " + map + " gives partition " + p
                    + " a negative length " + lengths[p]);
            }
        }
        long at = MapStatusDescriptor.messageLengthOffset(partitions);
        int n = r.get(INT, at);
        if (n < 0 || at + Integer.BYTES + n > size) {
            throw new IllegalStateException("the status record of map " + map + " has a message of " + n
                + " bytes but only " + (size - at - Integer.BYTES) + " bytes follow");
        }
        String message = new String(r.asSlice(at + Integer.BYTES, n).toArray(JAVA_BYTE), StandardCharsets.UTF_8);
        return new MapStatus(map, state == MapStatusDescriptor.STATE_COMMITTED, r.get(LONG, MapStatusDescriptor.WRITER_OFFSET),
            lengths, message);
    }

    /**
     * Waits until map {@code map} has committed, until {@code deadlineNanos} ({@code Long.MAX_VALUE}: forever).
     * Between waits on the status record (a futex, woken by its seal) it checks every
     * {@value #LIVENESS_CHECK_MILLIS} ms that the map's writing process still lives.
     *
     * @throws Shuffle.MapFailedException when the map failed or its process died
     * @throws Shuffle.MapTimeoutException when the deadline passes first
     */
    static MapStatus awaitCommitted(DepotClient client, ShuffleIds ids, String shuffleId, int map, int partitions,
                                    long deadlineNanos) {
        while (true) {
            long left = deadlineNanos == Long.MAX_VALUE ? Long.MAX_VALUE : deadlineNanos - System.nanoTime();
            long waitMillis = Math.max(0, Math.min(LIVENESS_CHECK_MILLIS, left / 1_000_000L));
            try (ObjectView v = client.tryGet(ids.status(map), waitMillis)) {
                if (v != null) {
                    MapStatus s = decode(v.data(), map, partitions);
                    if (!s.committed) {
                        throw new Shuffle.MapFailedException(shuffleId, map, "failed in pid "
                            + ProcessIdentity.pidOf(s.writer) + ": " + s.message);
                    }
                    return s;
                }
            }
            long owner = ownerIdentity(client, ids, map);
            if (owner != 0 && !ProcessIdentity.isAlive(owner)) {
                // It may have committed just before it exited: look once more before calling it dead.
                try (ObjectView v = client.tryGet(ids.status(map), 0)) {
                    if (v == null) {
                        throw new Shuffle.MapFailedException(shuffleId, map, "died (pid " + ProcessIdentity.pidOf(owner)
                            + " exited) before committing its output");
                    }
                }
                continue;
            }
            if (deadlineNanos != Long.MAX_VALUE && System.nanoTime() - deadlineNanos >= 0) {
                throw new Shuffle.MapTimeoutException(shuffleId, map, owner == 0 ? "has not started (no writer opened it)"
                    : "is still running in pid " + ProcessIdentity.pidOf(owner));
            }
        }
    }

    /** The identity of the process writing {@code map}, or 0 when no writer has opened it. */
    static long ownerIdentity(DepotClient client, ShuffleIds ids, int map) {
        try (ObjectView v = client.tryGet(ids.owner(map), 0)) {
            if (v == null || v.size() < MapStatusDescriptor.OWNER_LENGTH) {
                return 0;
            }
            return v.data().get(LONG, MapStatusDescriptor.OWNER_IDENTITY_OFFSET);
        }
    }

    private static String describeOwner(DepotClient client, ShuffleIds ids, int map) {
        long owner = ownerIdentity(client, ids, map);
        return owner == 0 ? "unknown process" : "pid " + ProcessIdentity.pidOf(owner)
            + (ProcessIdentity.isAlive(owner) ? ", running" : ", dead");
    }
}
