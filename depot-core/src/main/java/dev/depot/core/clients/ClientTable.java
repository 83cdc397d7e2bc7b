package dev.depot.core.clients;

import static dev.depot.core.clients.ClientTableDescriptor.*;

import dev.depot.core.memory.Atomics;
import dev.depot.core.sys.ProcessIdentity;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The table of processes that have the store open, and the pin records they hold. Any process may read it;
 * a slot's pin records are written only by its owner, except that a reaper clears the records of a dead owner
 * before freeing its slot.
 */
public final class ClientTable {
    private final MemorySegment table;
    private final int maxClients;
    private final int pinsPerClient;
    private final long slotLength;

    public ClientTable(MemorySegment table, int maxClients, int pinsPerClient) {
        this.table = table;
        this.maxClients = maxClients;
        this.pinsPerClient = pinsPerClient;
        this.slotLength = slotLength(pinsPerClient);
        Atomics.checkAligned(table, 0, 128, "client table");
    }

    public int maxClients() {
        return maxClients;
    }

    public int pinsPerClient() {
        return pinsPerClient;
    }

    /** The segment of one client's slot. */
    public MemorySegment slot(int client) {
        return table.asSlice(client * slotLength, slotLength);
    }

    /** Claims a free slot for this process with one CAS; returns its index, or -1 when the table is full. */
    public int register(int kind) {
        long self = ProcessIdentity.self();
        for (int c = 0; c < maxClients; c++) {
            long base = c * slotLength;
            if (Atomics.getLongVolatile(table, base + IDENTITY_OFFSET) == 0
                && Atomics.compareAndSetLong(table, base + IDENTITY_OFFSET, 0, self)) {
                table.set(ValueLayout.JAVA_INT, base + KIND_OFFSET, kind);
                table.set(ValueLayout.JAVA_LONG, base + REGISTERED_AT_OFFSET, System.currentTimeMillis());
                return c;
            }
        }
        return -1;
    }

    /**
     * Takes over a slot whose process is dead (pid gone, or reused by another start time), with one CAS of its
     * identity from the dead one to ours; returns its index, or -1 when every slot belongs to a live process.
     * The slot still holds what the dead process left (pins, and index entries naming it as owner): the caller
     * must settle them under the allocator lock before using the slot ({@code Reaper.settleTakenOverSlot}), as a
     * reaper would have. A reaper racing us checks the identity under the lock and leaves the slot alone.
     */
    public int takeOverDead(int kind) {
        long self = ProcessIdentity.self();
        for (int c = 0; c < maxClients; c++) {
            long base = c * slotLength;
            long dead = Atomics.getLongVolatile(table, base + IDENTITY_OFFSET);
            if (dead != 0 && dead != self && !ProcessIdentity.isAlive(dead)
                && Atomics.compareAndSetLong(table, base + IDENTITY_OFFSET, dead, self)) {
                table.set(ValueLayout.JAVA_INT, base + KIND_OFFSET, kind);
                table.set(ValueLayout.JAVA_LONG, base + REGISTERED_AT_OFFSET, System.currentTimeMillis());
                return c;
            }
        }
        return -1;
    }

    /** Pids of the processes holding slots (for messages), at most {@code limit}. */
    public java.util.List<Integer> registeredPids(int limit) {
        java.util.List<Integer> pids = new java.util.ArrayList<>();
        for (int c = 0; c < maxClients && pids.size() < limit; c++) {
            long id = identity(c);
            if (id != 0) {
                pids.add(ProcessIdentity.pidOf(id));
            }
        }
        return pids;
    }

    /** The packed identity (pid, start time) in a slot; 0 when free. */
    public long identity(int client) {
        return Atomics.getLongVolatile(table, client * slotLength + IDENTITY_OFFSET);
    }

    public int kind(int client) {
        return table.get(ValueLayout.JAVA_INT, client * slotLength + KIND_OFFSET);
    }

    /** True when the slot is taken by a process that is still running. */
    public boolean isAlive(int client) {
        return ProcessIdentity.isAlive(identity(client));
    }

    public int countRegistered() {
        int n = 0;
        for (int c = 0; c < maxClients; c++) {
            if (identity(c) != 0) {
                n++;
            }
        }
        return n;
    }

    /**
     * Frees a slot whose identity is still {@code identity}: clears its pin records first (so that no scan
     * counts them afterwards), then releases the slot with a CAS.
     */
    public boolean release(int client, long identity) {
        clearPins(client);
        return Atomics.compareAndSetLong(table, client * slotLength + IDENTITY_OFFSET, identity, 0);
    }

    /** Clears every pin record of a slot (its owner is gone or closing): no scan counts them afterwards. */
    public void clearPins(int client) {
        long base = client * slotLength;
        int highWater = Math.min(Atomics.getIntAcquire(table, base + PIN_HIGH_WATER_OFFSET), pinsPerClient);
        for (int r = 0; r < highWater; r++) {
            Atomics.putLongVolatile(table, base + pinRecordOffset(r), 0);
        }
        Atomics.putIntRelease(table, base + PIN_HIGH_WATER_OFFSET, 0);
    }

    /**
     * Counts the pin records equal to {@code record} across all clients, live or not yet reaped. Loads are
     * volatile: this is the deleter's half of the Dekker handshake with {@link PinTable#pin}.
     */
    public int countPins(long record) {
        int[] n = {0};
        forEachPin((client, rec) -> {
            if (rec == record) {
                n[0]++;
            }
        });
        return n[0];
    }

    public boolean isPinned(long record) {
        return countPins(record) > 0;
    }

    /**
     * Calls {@code visitor} with every non-empty pin record of every registered client. Records are read with
     * volatile loads (see {@link #countPins}).
     */
    public void forEachPin(PinVisitor visitor) {
        for (int c = 0; c < maxClients; c++) {
            long base = c * slotLength;
            if (Atomics.getLongVolatile(table, base + IDENTITY_OFFSET) == 0) {
                continue;
            }
            int highWater = Math.min(Atomics.getIntAcquire(table, base + PIN_HIGH_WATER_OFFSET), pinsPerClient);
            for (int r = 0; r < highWater; r++) {
                long rec = Atomics.getLongVolatile(table, base + pinRecordOffset(r));
                if (rec != 0) {
                    visitor.visit(c, rec);
                }
            }
        }
    }

    /** Adds to one operation counter of this process's own slot ({@code ClientTableDescriptor.*S_OFFSET}). */
    public void count(int client, int counterOffset) {
        Atomics.getAndAddLong(table, client * slotLength + counterOffset, 1);
    }

    /** The sum of one operation counter over every slot, free or taken (counts outlive their clients). */
    public long sumCounter(int counterOffset) {
        long sum = 0;
        for (int c = 0; c < maxClients; c++) {
            sum += Atomics.getLongVolatile(table, c * slotLength + counterOffset);
        }
        return sum;
    }

    /** Receives pin records. */
    @FunctionalInterface
    public interface PinVisitor {
        void visit(int client, long record);
    }
}
