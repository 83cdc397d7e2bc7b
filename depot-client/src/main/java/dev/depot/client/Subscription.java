package dev.depot.client;

import dev.depot.core.notify.Event;
import dev.depot.core.notify.EventRecordDescriptor;
import dev.depot.core.notify.Subscriber;
import dev.depot.core.store.Timeouts;
import java.time.Duration;
import java.time.Instant;

/**
 * Every object event of the store from the moment of subscription ({@link DepotClient#subscribe()}): sealed,
 * deleted, evicted, spilled, restored, whoever performed them. Events wait in a bounded buffer in shared memory
 * ({@value dev.depot.core.notify.NotificationDescriptor#RING_RECORDS} events); a subscriber that falls further
 * behind gets a {@link ObjectEvent.Type#MISSED} event with the count instead, and writers never wait for it.
 * {@link #next} sleeps on a futex word until an event comes (no polling). A store has
 * {@value dev.depot.core.notify.NotificationDescriptor#SUBSCRIBERS} subscriber slots; a process killed while
 * subscribed frees its slot through the daemon's reaper. Used by one thread at a time; close it (or the client).
 */
public final class Subscription implements AutoCloseable {
    private final DepotClient client;
    private final Subscriber subscriber;

    Subscription(DepotClient client, Subscriber subscriber) {
        this.client = client;
        this.subscriber = subscriber;
    }

    /**
     * The next event, waiting up to {@code timeoutMillis} (0: do not wait; negative: wait forever); null when none
     * came in time.
     *
     * @throws IllegalStateException when the subscription or its client is closed
     */
    public ObjectEvent next(long timeoutMillis) {
        Event e = subscriber.next(Timeouts.nanosOf(timeoutMillis));
        return e == null ? null : toObjectEvent(e);
    }

    /** As {@link #next(long)}. */
    public ObjectEvent next(Duration timeout) {
        long millis;
        try {
            millis = timeout.toMillis();
        } catch (ArithmeticException tooLong) {
            millis = -1;
        }
        return next(timeout.isNegative() ? -1 : millis);
    }

    private static ObjectEvent toObjectEvent(Event e) {
        Instant time = Instant.ofEpochMilli(e.timeMillis());
        if (e.type() == Event.TYPE_MISSED) {
            return new ObjectEvent(ObjectEvent.Type.MISSED, null, 0, 0, e.missed(), 0, time);
        }
        ObjectEvent.Type type = switch (e.type()) {
            case EventRecordDescriptor.TYPE_SEALED -> ObjectEvent.Type.SEALED;
            case EventRecordDescriptor.TYPE_DELETED -> ObjectEvent.Type.DELETED;
            case EventRecordDescriptor.TYPE_EVICTED -> ObjectEvent.Type.EVICTED;
            case EventRecordDescriptor.TYPE_SPILLED -> ObjectEvent.Type.SPILLED;
            case EventRecordDescriptor.TYPE_RESTORED -> ObjectEvent.Type.RESTORED;
            default -> throw new dev.depot.errors.StoreFormatException("event of unknown type " + e.type()
                + " in the notification region of " + "the store; run `depot doctor`");
        };
        return new ObjectEvent(type, ObjectId.fromBytes(e.id()), e.dataLength(), e.metadataLength(), 0,
            e.publisherPid(), time);
    }

    public boolean isClosed() {
        return subscriber.isClosed();
    }

    /** Frees the subscriber slot. Closing twice is harmless. */
    @Override
    public void close() {
        subscriber.close();
        client.subscriptionClosed(this);
    }
}
