package dev.depot.core.notify;

import static dev.depot.core.notify.EventRecordDescriptor.*;
import static dev.depot.core.notify.NotificationDescriptor.*;

import dev.depot.core.memory.Atomics;
import dev.depot.core.sys.Native;
import dev.depot.core.sys.ProcessIdentity;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.function.IntPredicate;

/**
 * The notification region of one mapping: publishing object events to every subscribed ring, and the
 * housekeeping of rings whose subscribers or publishers died. The protocol is drawn in
 * {@link NotificationDescriptor}. Thread-safe; publishing never blocks and never allocates.
 */
public final class EventRings {
    /** Claim attempts before a publisher counts the event as missed (each failed one means another's progress). */
    private static final int MAX_CLAIM_ATTEMPTS = 64;
    private static final int PID = (int) ProcessHandle.current().pid();

    private final MemorySegment region;

    public EventRings(MemorySegment region) {
        if (region.byteSize() < REGION_LENGTH) {
            throw new IllegalArgumentException("notification region of " + region.byteSize() + " bytes, expected "
                + REGION_LENGTH);
        }
        this.region = region;
        Atomics.checkAligned(region, 0, 128, "notification region");
    }

    MemorySegment region() {
        return region;
    }

    /** Bit i set: ring i has a subscriber. */
    public int activeMask() {
        return Atomics.getIntVolatile(region, ACTIVE_MASK_OFFSET);
    }

    /** Publishes an event about the object with id words {@code (w0, w1, w2)}, as client slot {@code publisher}. */
    public void publish(int publisher, int type, long w0, long w1, int w2, long dataLength, int metadataLength) {
        int mask = activeMask();
        while (mask != 0) {
            int ring = Integer.numberOfTrailingZeros(mask);
            mask &= mask - 1;
            append(ringOffset(ring), publisher, type, w0, w1, w2, dataLength, metadataLength);
        }
    }

    /** As {@link #publish(int, int, long, long, int, long, int)}, the id as its 20 bytes. */
    public void publish(int publisher, int type, byte[] id, long dataLength, int metadataLength) {
        if (activeMask() == 0) {
            return;
        }
        MemorySegment s = MemorySegment.ofArray(id);
        publish(publisher, type, s.get(LONG_LE, 0), s.get(LONG_LE, 8), s.get(INT_LE, 16), dataLength, metadataLength);
    }

    private static final ValueLayout.OfLong LONG_LE = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt INT_LE = ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);

    /** Claim, fill, commit one record in the ring at {@code ring}; a full ring counts a missed event instead. */
    private void append(long ring, int publisher, int type, long w0, long w1, int w2, long dataLength, int metadataLength) {
        for (int attempt = 0; attempt < MAX_CLAIM_ATTEMPTS; attempt++) {
            long position = Atomics.getLongVolatile(region, ring + TAIL_OFFSET);
            long lap = NotificationDescriptor.lapOf(position);
            long record = ring + recordOffset(position);
            long stamp = Atomics.getLongVolatile(region, record + STAMP_OFFSET);
            long stampLap = EventRecordDescriptor.lapOf(stamp);
            if (stamp == EventRecordDescriptor.stamp(lap, KIND_FREE, 0)) {
                if (!Atomics.compareAndSetLong(region, record + STAMP_OFFSET, stamp,
                    EventRecordDescriptor.stamp(lap, KIND_CLAIMED, publisher))) {
                    continue;  // another publisher claimed it: it advances the tail, we try the next
                }
                Atomics.compareAndSetLong(region, ring + TAIL_OFFSET, position, position + 1);
                region.set(ValueLayout.JAVA_INT, record + TYPE_OFFSET, type);
                region.set(ValueLayout.JAVA_INT, record + METADATA_LENGTH_OFFSET, metadataLength);
                region.set(ValueLayout.JAVA_LONG, record + DATA_LENGTH_OFFSET, dataLength);
                region.set(LONG_LE, record + ID_OFFSET, w0);
                region.set(LONG_LE, record + ID_OFFSET + 8, w1);
                region.set(INT_LE, record + ID_OFFSET + 16, w2);
                region.set(ValueLayout.JAVA_INT, record + PUBLISHER_PID_OFFSET, PID);
                region.set(ValueLayout.JAVA_LONG, record + TIME_OFFSET, System.currentTimeMillis());
                // Commit: the fields above are published with the stamp (a reader that sees COMMITTED sees them).
                Atomics.putLongVolatile(region, record + STAMP_OFFSET, EventRecordDescriptor.stamp(lap, KIND_COMMITTED, 0));
                wake(ring);
                return;
            }
            if (stampLap == lap && kindOf(stamp) != KIND_FREE) {
                // Claimed by another publisher that has not advanced the tail yet: help it, then retry.
                Atomics.compareAndSetLong(region, ring + TAIL_OFFSET, position, position + 1);
                continue;
            }
            if (stampLap < lap) {
                break;  // the cell still holds the previous lap, unread: the ring is full
            }
            // A stale tail (another publisher moved on meanwhile): read it again.
        }
        Atomics.getAndAddLong(region, ring + MISSED_OFFSET, 1);
        wake(ring);
    }

    /** Bumps the ring's wake sequence and wakes its subscriber if it sleeps (Dekker with {@link Subscriber}). */
    private void wake(long ring) {
        Atomics.getAndAddInt(region, ring + WAKE_SEQUENCE_OFFSET, 1);
        if (Atomics.getIntVolatile(region, ring + SLEEPING_OFFSET) != 0) {
            Native.futexWakeAll(region.address() + ring + WAKE_SEQUENCE_OFFSET);
        }
    }

    /**
     * Aborts every record that client slot {@code client} claimed and never committed (it died mid-append):
     * CAS {@code CLAIMED(lap, client)} to {@code ABORTED(lap)}, which subscribers skip as one missed event. Called
     * before a dead client's slot is freed or reused, so a new owner of the slot is never taken for the claimer.
     */
    public void abortClaimsOf(int client) {
        for (int ring = 0; ring < SUBSCRIBERS; ring++) {
            long base = ringOffset(ring);
            for (int cell = 0; cell < RING_RECORDS; cell++) {
                long at = base + RECORDS_OFFSET + (long) cell * RECORD_LENGTH + STAMP_OFFSET;
                long stamp = Atomics.getLongVolatile(region, at);
                if (kindOf(stamp) == KIND_CLAIMED && claimerOf(stamp) == client
                    && Atomics.compareAndSetLong(region, at, stamp, EventRecordDescriptor.stamp(EventRecordDescriptor.lapOf(stamp),
                    KIND_ABORTED, 0))) {
                    wake(base);
                }
            }
        }
    }

    /** Frees the rings of subscribers whose processes died; returns how many. */
    public int freeDeadSubscribers() {
        int freed = 0;
        for (int ring = 0; ring < SUBSCRIBERS; ring++) {
            long owner = owner(ring);
            if (owner != 0 && !ProcessIdentity.isAlive(owner) && release(ring, owner)) {
                freed++;
            }
        }
        return freed;
    }

    long owner(int ring) {
        return Atomics.getLongVolatile(region, ringOffset(ring) + OWNER_OFFSET);
    }

    /**
     * Subscribers now: rings that events are published to (live subscribers, and dead ones not yet reaped). A ring
     * being claimed counts only once its subscriber is turned on, so an event published after this count rose is
     * delivered to it (a count of claimed rings let a caller publish between the claim and the turning on).
     */
    public int subscriberCount() {
        return Integer.bitCount(activeMask());
    }

    /**
     * Frees ring {@code ring} if {@code owner} still owns it: its owner becomes {@link #RELEASING} (one CAS, so a
     * racing taker or reaper cannot act on it too), it leaves the active mask, then its owner becomes 0. Killed
     * half-way, the ring stays {@code RELEASING}, which no process is: the reaper frees it, a subscriber takes it.
     */
    boolean release(int ring, long owner) {
        long at = ringOffset(ring) + OWNER_OFFSET;
        if (!Atomics.compareAndSetLong(region, at, owner, RELEASING)) {
            return false;
        }
        setActive(ring, false);
        Atomics.putLongVolatile(region, at, 0);
        return true;
    }

    /** The owner of a ring being released: an identity no process has (pid -1). */
    static final long RELEASING = -1;

    void setActive(int ring, boolean active) {
        while (true) {
            int mask = activeMask();
            int next = active ? mask | (1 << ring) : mask & ~(1 << ring);
            if (mask == next || Atomics.compareAndSetInt(region, ACTIVE_MASK_OFFSET, mask, next)) {
                return;
            }
        }
    }

    /**
     * Subscribes: claims a free ring for this process, discards what it still holds, and turns it on.
     *
     * @param clientAlive tells whether a client slot's process lives (to abort a dead publisher's claim)
     * @return the subscriber, or null when all {@link NotificationDescriptor#SUBSCRIBERS} rings are taken
     */
    public Subscriber subscribe(IntPredicate clientAlive) {
        long self = ProcessIdentity.self();
        for (int ring = 0; ring < SUBSCRIBERS; ring++) {
            if (owner(ring) == 0 && Atomics.compareAndSetLong(region, ringOffset(ring) + OWNER_OFFSET, 0, self)) {
                return start(ring, self, clientAlive);
            }
        }
        // None free: take over a ring whose subscriber died (as a client slot is taken over), daemon or not. Its
        // active bit may still be set: events published while we discard its backlog are discarded or delivered.
        for (int ring = 0; ring < SUBSCRIBERS; ring++) {
            long dead = owner(ring);
            if (dead != 0 && !ProcessIdentity.isAlive(dead)
                && Atomics.compareAndSetLong(region, ringOffset(ring) + OWNER_OFFSET, dead, self)) {
                return start(ring, self, clientAlive);
            }
        }
        return null;
    }

    private Subscriber start(int ring, long self, IntPredicate clientAlive) {
        region.set(ValueLayout.JAVA_LONG, ringOffset(ring) + SUBSCRIBED_AT_OFFSET, System.currentTimeMillis());
        Subscriber s = new Subscriber(this, ring, self, clientAlive);
        try {
            s.discardBacklog();
        } catch (RuntimeException | Error e) {
            release(ring, self);
            throw e;
        }
        setActive(ring, true);
        return s;
    }
}
