package dev.depot.core.notify;

import static dev.depot.core.notify.EventRecordDescriptor.*;
import static dev.depot.core.notify.NotificationDescriptor.*;

import dev.depot.core.memory.Atomics;
import dev.depot.core.sys.FutexWaiter;
import dev.depot.core.sys.Native;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.IntPredicate;

/**
 * The consumer of one subscriber ring ({@link NotificationDescriptor}): the only writer of its head and its
 * sleeping flag. One thread reads at a time ({@link #next} holds a lock); {@link #close} may come from any thread:
 * it frees the ring at once when no {@code next} runs, else wakes that {@code next}, which frees it and fails.
 */
public final class Subscriber implements AutoCloseable {
    /** How long the subscriber sleeps at a record claimed by a live publisher before it looks again. */
    private static final long CLAIMED_RECHECK_NANOS = 10_000_000L;

    private final EventRings rings;
    private final MemorySegment region;
    private final int ring;
    private final long base;
    private final long owner;
    private final IntPredicate clientAlive;
    /** The head when this subscriber first saw a non-zero missed count not yet reported; -1: none. */
    private long missedSeenAt = -1;
    /** Set by {@link #poll} when the head is claimed by a live publisher that has not committed yet. */
    private boolean headClaimed;
    private final ReentrantLock reading = new ReentrantLock();
    private volatile boolean closed;
    private final AtomicBoolean released = new AtomicBoolean();

    Subscriber(EventRings rings, int ring, long owner, IntPredicate clientAlive) {
        this.rings = rings;
        this.region = rings.region();
        this.ring = ring;
        this.base = ringOffset(ring);
        this.owner = owner;
        this.clientAlive = clientAlive;
    }

    public int ring() {
        return ring;
    }

    /** Discards what a previous owner left unread, up to the tail as it is now, and any missed count. */
    void discardBacklog() {
        long target = Atomics.getLongVolatile(region, base + TAIL_OFFSET);
        long deadline = System.nanoTime() + 1_000_000_000L;
        while (head() < target) {
            if (poll(true) == null) {
                if (System.nanoTime() > deadline) {
                    break;  // a claim held by a stopped publisher: deliver what follows it rather than hang here
                }
                Thread.yield();
            }
        }
        takeMissed();
        missedSeenAt = -1;
    }

    private long head() {
        return Atomics.getLongPlain(region, base + HEAD_OFFSET);
    }

    /**
     * The next event, waiting up to {@code timeoutNanos} (negative: forever, 0: do not wait) asleep on the
     * ring's futex word; null when none came in time.
     */
    public Event next(long timeoutNanos) {
        reading.lock();
        try {
            return nextLocked(timeoutNanos);
        } finally {
            reading.unlock();
        }
    }

    /**
     * Polls, and between polls waits on the ring's wake sequence ({@link FutexWaiter}, without spinning). Dekker
     * with {@link EventRings}' wake: the sleeping flag is raised (the waiter count of this single-reader ring),
     * then each turn reads the sequence and polls again; a publisher commits, bumps the sequence and reads the
     * flag. {@link #close} stores its flag before it bumps the sequence, so a turn sees one or the other.
     */
    private Event nextLocked(long timeoutNanos) {
        try (FutexWaiter wait = new FutexWaiter(region, base + WAKE_SEQUENCE_OFFSET, this::raiseSleeping, 0,
                timeoutNanos)) {
            while (true) {
                int sequence = wait.sequence();
                if (closed) {
                    releaseOnce();
                    throw new IllegalStateException("this subscription is closed");
                }
                headClaimed = false;
                Event e = poll(false);
                if (e != null) {
                    return e;
                }
                // A record claimed by a live publisher is committed soon, or its publisher dies: look again now
                // and then.
                if (wait.pause(sequence, headClaimed ? CLAIMED_RECHECK_NANOS : FutexWaiter.FOREVER)
                    == FutexWaiter.Pause.EXPIRED) {
                    return null;
                }
            }
        }
    }

    private void raiseSleeping(int delta) {
        Atomics.putIntVolatile(region, base + SLEEPING_OFFSET, delta > 0 ? 1 : 0);
    }

    /**
     * One step without waiting: the next event, a missed report, or null (nothing committed at the head).
     * Events are dropped only when the ring is full, so they are newer than every record the ring held then: the
     * count is reported once those records are read (at most {@link NotificationDescriptor#RING_RECORDS} after it
     * was first seen), or as soon as the head has nothing to read.
     */
    private Event poll(boolean discarding) {
        while (true) {
            long head = head();
            if (!discarding && missedSeenAt < 0 && Atomics.getLongVolatile(region, base + MISSED_OFFSET) != 0) {
                missedSeenAt = head;
            }
            if (missedSeenAt >= 0 && head - missedSeenAt >= RING_RECORDS) {
                return reportMissed();
            }
            long lap = NotificationDescriptor.lapOf(head);
            long record = base + recordOffset(head);
            long stamp = Atomics.getLongVolatile(region, record + STAMP_OFFSET);
            int kind = kindOf(stamp);
            if (EventRecordDescriptor.lapOf(stamp) != lap || kind == KIND_FREE) {
                return missedSeenAt >= 0 ? reportMissed() : null;  // nothing published at the head yet
            }
            if (kind == KIND_COMMITTED) {
                Event e = discarding ? Event.missed(0) : read(record);
                advance(record, lap, head);
                return e;
            }
            if (kind == KIND_ABORTED) {
                advance(record, lap, head);
                if (!discarding) {
                    return Event.missed(1);  // its publisher died while writing it
                }
                continue;
            }
            // CLAIMED: being written, and its commit wakes us; unless the publisher died between claim and commit.
            if (clientAlive.test(claimerOf(stamp))) {
                headClaimed = true;
                return missedSeenAt >= 0 ? reportMissed() : null;
            }
            Atomics.compareAndSetLong(region, record + STAMP_OFFSET, stamp, EventRecordDescriptor.stamp(lap, KIND_ABORTED, 0));
        }
    }

    private Event reportMissed() {
        missedSeenAt = -1;
        long n = takeMissed();
        return n > 0 ? Event.missed(n) : null;
    }

    /** Frees the record's cell for the next lap (release: after our reads of it), then moves the head on. */
    private void advance(long record, long lap, long head) {
        Atomics.putLongRelease(region, record + STAMP_OFFSET, EventRecordDescriptor.stamp(lap + 1, KIND_FREE, 0));
        Atomics.putLongRelease(region, base + HEAD_OFFSET, head + 1);
    }

    private long takeMissed() {
        while (true) {
            long n = Atomics.getLongVolatile(region, base + MISSED_OFFSET);
            if (n == 0 || Atomics.compareAndSetLong(region, base + MISSED_OFFSET, n, 0)) {
                return n;
            }
        }
    }

    private Event read(long record) {
        byte[] id = new byte[ID_LENGTH];
        MemorySegment.copy(region, ValueLayout.JAVA_BYTE, record + ID_OFFSET, id, 0, ID_LENGTH);
        return new Event(region.get(ValueLayout.JAVA_INT, record + TYPE_OFFSET), id,
            region.get(ValueLayout.JAVA_LONG, record + DATA_LENGTH_OFFSET),
            region.get(ValueLayout.JAVA_INT, record + METADATA_LENGTH_OFFSET),
            region.get(ValueLayout.JAVA_INT, record + PUBLISHER_PID_OFFSET),
            region.get(ValueLayout.JAVA_LONG, record + TIME_OFFSET), 0);
    }

    public boolean isClosed() {
        return closed;
    }

    /**
     * Frees the ring (off the active mask first, so publishers stop writing to it); when another thread is in
     * {@link #next}, wakes it to free the ring and fail. Closing twice is harmless.
     */
    @Override
    public void close() {
        closed = true;
        if (reading.tryLock()) {
            try {
                releaseOnce();
            } finally {
                reading.unlock();
            }
        } else {
            Atomics.getAndAddInt(region, base + WAKE_SEQUENCE_OFFSET, 1);
            Native.futexWakeAll(region.address() + base + WAKE_SEQUENCE_OFFSET);
        }
    }

    private void releaseOnce() {
        if (released.compareAndSet(false, true)) {
            rings.release(ring, owner);
        }
    }
}
