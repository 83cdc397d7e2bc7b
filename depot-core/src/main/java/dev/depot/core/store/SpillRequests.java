package dev.depot.core.store;

import static dev.depot.core.index.IndexEntryDescriptor.state;
import static dev.depot.core.store.StoreHeaderDescriptor.DAEMON_IDENTITY_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.SPILL_DIRECTORY_LENGTH_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.SPILL_DIRECTORY_MAX;
import static dev.depot.core.store.StoreHeaderDescriptor.SPILL_DIRECTORY_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.SPILL_ERROR_IO;
import static dev.depot.core.store.StoreHeaderDescriptor.SPILL_ERROR_LIMIT;
import static dev.depot.core.store.StoreHeaderDescriptor.SPILL_ERROR_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.SPILL_LIMIT_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.SPILL_REQUEST_SEQUENCE_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.SPILL_STATE_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.SPILL_STATE_ON;
import static dev.depot.core.store.StoreHeaderDescriptor.SPILL_WANTED_BYTES_OFFSET;

import dev.depot.core.index.EntryState;
import dev.depot.core.index.IndexEntryDescriptor;
import dev.depot.core.index.ObjectIndex;
import dev.depot.core.memory.Atomics;
import dev.depot.core.sys.Native;
import dev.depot.core.sys.ProcessIdentity;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;

/**
 * What clients ask of the daemon's spiller and read of its state in the header: whether it runs, why it could not
 * help, where it spills; requests for room (spill KEEP objects) and for restores of spilled objects, each
 * followed by a wake-up of the spiller's futex word. The spiller's own side is {@link Spilling}.
 */
final class SpillRequests {
    private final MemorySegment header;
    private final ObjectIndex index;
    private final RestoreFailures restoreFailures;

    SpillRequests(Store store) {
        this.header = store.header;
        this.index = store.index;
        this.restoreFailures = store.restoreFailures;
    }

    /** True when a live daemon runs a spiller on this store. */
    boolean spillerIsOn() {
        return Atomics.getIntVolatile(header, SPILL_STATE_OFFSET) == SPILL_STATE_ON
            && ProcessIdentity.isAlive(Atomics.getLongVolatile(header, DAEMON_IDENTITY_OFFSET));
    }

    /** True when the spiller reports no error, so that a request for room may be met. */
    boolean spillerReportsNoError() {
        return Atomics.getIntVolatile(header, SPILL_ERROR_OFFSET) == 0;
    }

    /** Why the spiller could not help, naming the spill directory; null when it reports no error. */
    String spillError() {
        int code = Atomics.getIntVolatile(header, SPILL_ERROR_OFFSET);
        String dir = spillDirectory();
        return switch (code) {
            case 0 -> null;
            case SPILL_ERROR_LIMIT -> "the spill directory " + dir + " holds its limit of "
                + Atomics.getLongVolatile(header, SPILL_LIMIT_OFFSET) + " bytes; raise --spill-limit or delete objects";
            case SPILL_ERROR_IO -> "writing to the spill directory " + dir + " failed (is its disk full?); see the"
                + " daemon's log, free space there or delete objects";
            default -> "every KEEP object is pinned or spilled already (spill directory " + dir + ")";
        };
    }

    /**
     * The daemon's spill directory as it published it in the header, or null. The length is read with acquire,
     * pairing with the spiller's release store after the bytes: a length in range means the bytes are there.
     */
    String spillDirectory() {
        int length = Atomics.getIntAcquire(header, SPILL_DIRECTORY_LENGTH_OFFSET);
        if (length <= 0 || length > SPILL_DIRECTORY_MAX) {
            return null;
        }
        byte[] b = new byte[length];
        MemorySegment.copy(header, ValueLayout.JAVA_BYTE, SPILL_DIRECTORY_OFFSET, b, 0, length);
        return new String(b, StandardCharsets.UTF_8);
    }

    /** Asks the daemon's spiller for room for a block of {@code blockSize} bytes and wakes it. */
    void requestSpill(long blockSize) {
        while (true) {
            long wanted = Atomics.getLongVolatile(header, SPILL_WANTED_BYTES_OFFSET);
            if (wanted >= blockSize || Atomics.compareAndSetLong(header, SPILL_WANTED_BYTES_OFFSET, wanted, blockSize)) {
                break;
            }
        }
        wakeSpiller();
    }

    /** Bumps the spiller's futex word and wakes it: a spill or restore request is waiting. */
    void wakeSpiller() {
        Atomics.getAndAddInt(header, SPILL_REQUEST_SEQUENCE_OFFSET, 1);
        Native.futexWakeAll(header.address() + SPILL_REQUEST_SEQUENCE_OFFSET);
    }

    /** See {@link Store#requestRestore}. */
    int requestRestore(long w0, long w1, int w2) {
        while (true) {
            int slot = index.findSpilled(w0, w1, w2);
            if (slot < 0) {
                return Store.NOT_SPILLED;
            }
            if (!spillerIsOn()) {
                return Store.RESTORE_IMPOSSIBLE;
            }
            long sw = index.stateWordVolatile(slot);
            EntryState st = state(sw);
            if (st == EntryState.SPILLED) {
                if (!index.compareAndSetStateWord(slot, sw, IndexEntryDescriptor.withState(sw, 0, EntryState.RESTORE_WANTED))) {
                    continue;
                }
                wakeSpiller();
                return Store.RESTORE_UNDER_WAY;
            }
            if (st == EntryState.RESTORE_WANTED || st == EntryState.RESTORING) {
                return Store.RESTORE_UNDER_WAY;
            }
            // Changed under us (restored, deleted): look again.
        }
    }

    /** See {@link Store#spilledEntry}. */
    long spilledEntry(long w0, long w1, int w2) {
        int slot = index.findSpilled(w0, w1, w2);
        if (slot < 0) {
            return -1;
        }
        return (long) slot << 32 | Integer.toUnsignedLong(IndexEntryDescriptor.generation(index.stateWordVolatile(slot)));
    }

    /** See {@link Store#restoreFailure}. */
    RestoreFailures.Failure restoreFailure(long entry) {
        return entry < 0 ? null : restoreFailures.find((int) (entry >>> 32), (int) entry);
    }
}
