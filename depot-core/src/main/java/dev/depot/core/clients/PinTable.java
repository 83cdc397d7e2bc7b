package dev.depot.core.clients;

import static dev.depot.core.clients.ClientTableDescriptor.PIN_HIGH_WATER_OFFSET;
import static dev.depot.core.clients.ClientTableDescriptor.pinRecordOffset;

import dev.depot.core.memory.Atomics;
import dev.depot.errors.ErrorCode;
import dev.depot.errors.ResourceLimitException;
import java.lang.foreign.MemorySegment;

/**
 * This process's own pin records, in its client slot. A pin is a record {@code (index slot, generation)}
 * published with a volatile store; because each record is written whole by one store, a process killed at any
 * instruction leaves each record either set or clear, never half-counted, and a reaper simply clears them.
 *
 * <p>Free record positions are kept in a process-local stack (LIFO, so the high-water mark that scanners
 * read stays low). Thread-safe.
 */
public final class PinTable {
    private final MemorySegment slot;
    private final int capacity;
    private final int[] freeStack;
    private int freeTop;
    private int highWater;

    public PinTable(MemorySegment slot, int capacity) {
        this.slot = slot;
        this.capacity = capacity;
        this.freeStack = new int[capacity];
        for (int i = 0; i < capacity; i++) {
            freeStack[i] = capacity - 1 - i;
        }
        this.freeTop = capacity;
        Atomics.checkAligned(slot, pinRecordOffset(0), Long.BYTES, "pin records");
    }

    /**
     * Publishes a pin record and returns its position. The store is volatile: the caller's following
     * volatile load of the object's state cannot move before it (Dekker with the deleter's CAS + scan).
     */
    public int pin(long record) {
        int r;
        synchronized (this) {
            if (freeTop == 0) {
                throw new ResourceLimitException(ErrorCode.TOO_MANY_PINS, "this process holds " + capacity
                    + " pinned objects, the most a client may; close views you no longer need");
            }
            r = freeStack[--freeTop];
            if (r >= highWater) {
                highWater = r + 1;
                // Published before the record: a scanner that sees the record's position within the high-water mark.
                Atomics.putIntRelease(slot, PIN_HIGH_WATER_OFFSET, highWater);
            }
        }
        Atomics.putLongVolatile(slot, pinRecordOffset(r), record);
        return r;
    }

    /** Clears the record at {@code position} (volatile, so the caller's next load of the object state follows it). */
    public void unpin(int position) {
        Atomics.putLongVolatile(slot, pinRecordOffset(position), 0);
        synchronized (this) {
            freeStack[freeTop++] = position;
        }
    }

    public synchronized int held() {
        return capacity - freeTop;
    }
}
