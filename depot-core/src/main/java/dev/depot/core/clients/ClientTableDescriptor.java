package dev.depot.core.clients;

/**
 * Layout of the client table: {@code maxClients} slots of {@link #slotLength(int)} bytes, one per process that
 * has the store open. A slot is claimed with one compare-and-set of its identity word from 0 to the process's
 * {@link dev.depot.core.sys.ProcessIdentity} (pid and start time), so a half-claimed slot cannot exist.
 *
 * <pre>
 *    0                   1                   2                   3
 *    0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *   +---------------------------------------------------------------+ 0
 *   |       Identity (pid &lt;&lt; 32 | start ticks), 0 = free (CAS)       |
 *   +-------------------------------+-------------------------------+ 8
 *   | Pin high water (release)      |  Kind (1 java, 2 python, 3 d) |
 *   +-------------------------------+-------------------------------+ 16
 *   |                   Registered at (epoch ms)                    |
 *   +---------------------------------------------------------------+ 24 .. 64 reserved
 *   |  Operation counters (format 1.2 on), int64 each, never reset:  |
 *   |  creates, gets, deletes, waits, wake-ups                       |
 *   +---------------------------------------------------------------+ 104 .. 128 reserved
 *   |  Pin records: pinsPerClient x int64                           |
 *   |  ((index slot + 1) &lt;&lt; 32 | generation), 0 = empty             |
 *   +---------------------------------------------------------------+ slotLength
 * </pre>
 * Pin records are written only by the slot's owner, with volatile stores (see {@link PinTable}); everyone else
 * only reads them, up to the high-water mark, which the owner publishes with a release store.
 *
 * <p>The operation counters are written only by the slot's owner (atomic adds: its threads share the slot) and
 * summed by {@code /metrics}. They are never cleared: registering leaves them as the previous owner left them, so
 * the next owner counts on from there and the sum over all slots only grows (a dead client's counts survive it,
 * and no step of a reaper can lose or double them).
 */
public final class ClientTableDescriptor {
    public static final int IDENTITY_OFFSET = 0;
    public static final int PIN_HIGH_WATER_OFFSET = IDENTITY_OFFSET + Long.BYTES;
    public static final int KIND_OFFSET = PIN_HIGH_WATER_OFFSET + Integer.BYTES;
    public static final int REGISTERED_AT_OFFSET = KIND_OFFSET + Integer.BYTES;
    public static final int CREATES_OFFSET = 64;
    public static final int GETS_OFFSET = CREATES_OFFSET + Long.BYTES;
    public static final int DELETES_OFFSET = GETS_OFFSET + Long.BYTES;
    public static final int WAITS_OFFSET = DELETES_OFFSET + Long.BYTES;
    public static final int WAKEUPS_OFFSET = WAITS_OFFSET + Long.BYTES;
    public static final int PIN_RECORDS_OFFSET = 128;
    public static final int PIN_RECORD_LENGTH = Long.BYTES;

    public static final int KIND_JAVA = 1;
    public static final int KIND_PYTHON = 2;
    public static final int KIND_DAEMON = 3;

    /**
     * Slots of a new store's client table: a node with a hundred Dask workers, their nannies and user processes
     * fits with room to spare. Each slot costs {@link #slotLength(int)} bytes of the store file (32,896 with the
     * default pins), so the default table takes 32.1 MiB.
     */
    public static final int DEFAULT_MAX_CLIENTS = 1024;
    public static final int DEFAULT_PINS_PER_CLIENT = 4096;

    private ClientTableDescriptor() {
    }

    /** Bytes per slot: the fixed part plus the pin records, rounded to 128 bytes. */
    public static long slotLength(int pinsPerClient) {
        long raw = PIN_RECORDS_OFFSET + (long) pinsPerClient * PIN_RECORD_LENGTH;
        return (raw + 127) & ~127L;
    }

    public static long tableLength(int maxClients, int pinsPerClient) {
        return maxClients * slotLength(pinsPerClient);
    }

    public static long pinRecordOffset(int record) {
        return PIN_RECORDS_OFFSET + (long) record * PIN_RECORD_LENGTH;
    }

    /** Packs an index slot and its generation into a pin record; never 0. */
    public static long pinRecord(int indexSlot, int generation) {
        return ((long) (indexSlot + 1) << 32) | (generation & 0xffff_ffffL);
    }

    /** The index slot named by a non-empty pin record. */
    public static int pinnedSlot(long record) {
        return (int) (record >>> 32) - 1;
    }
}
