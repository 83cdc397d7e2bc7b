package dev.depot.core.store;

import dev.depot.core.clients.ClientTable;
import dev.depot.core.index.IndexEntryDescriptor;
import dev.depot.core.index.ObjectIndex;
import dev.depot.core.notify.EventRings;
import dev.depot.core.notify.NotificationDescriptor;
import dev.depot.core.notify.Subscriber;
import dev.depot.errors.DepotException;
import dev.depot.errors.ErrorCode;
import dev.depot.errors.ResourceLimitException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

/**
 * One client's side of the store's object events ({@link EventRings}): it publishes what it does to entries
 * (sealed, deleted, evicted, spilled, restored) and subscribes to what every client does. Publishing costs one
 * volatile read while nobody subscribes, and never blocks, so it is safe under the allocator lock.
 */
final class ObjectEvents {
    /** The notification rings; null in a format 1.1 store, which has none. */
    private final EventRings rings;
    private final ObjectIndex index;
    private final ClientTable clients;
    private final int me;
    private final Path directory;

    ObjectEvents(MemorySegment region, ObjectIndex index, ClientTable clients, int me, Path directory) {
        this.rings = region == null ? null : new EventRings(region);
        this.index = index;
        this.clients = clients;
        this.me = me;
        this.directory = directory;
    }

    /** An event read from an entry while the caller owns it, published later; null: nobody subscribes. */
    record EventDraft(int type, byte[] id, long dataLength, int metadataLength) {
    }

    /** Publishes an event about the live entry in {@code slot} (its id and sizes) to every subscriber. */
    void publish(int type, int slot) {
        publish(draft(type, slot));
    }

    /**
     * Reads the event about the entry in {@code slot} now, for {@link #publish(EventDraft)} once the caller has
     * changed the entry (after which the slot may hold another object).
     */
    EventDraft draft(int type, int slot) {
        if (rings == null || rings.activeMask() == 0) {
            return null;
        }
        byte[] id = new byte[IndexEntryDescriptor.ID_LENGTH];
        index.readId(slot, id);
        return new EventDraft(type, id, index.dataLength(slot), index.metadataLength(slot));
    }

    void publish(EventDraft draft) {
        if (draft != null) {
            rings.publish(me, draft.type(), draft.id(), draft.dataLength(), draft.metadataLength());
        }
    }

    /** Subscribers now, live or dead and not yet reaped (0 when the store has no notification region). */
    int subscriberCount() {
        return rings == null ? 0 : rings.subscriberCount();
    }

    /** The notification rings, or null when the store's format (1.1) has none. */
    EventRings rings() {
        return rings;
    }

    /** See {@link Store#subscribe}. */
    Subscriber subscribe() {
        if (rings == null) {
            throw new DepotException("the store at " + directory + " has format 1.1, which has no notification"
                + " region; recreate it with this Depot to subscribe");
        }
        Subscriber s = rings.subscribe(clients::isAlive);
        if (s == null) {
            throw new ResourceLimitException(ErrorCode.TOO_MANY_CLIENTS, "the store at " + directory + " has all "
                + NotificationDescriptor.SUBSCRIBERS + " subscriber slots taken (" + rings.subscriberCount()
                + " subscribers); close a subscription (`depot watch` included) or wait for the daemon to free those"
                + " of dead processes");
        }
        return s;
    }
}
