package dev.depot.core.store;

/**
 * A pin this process holds: the pin record {@code (index slot, generation)} and its position in our pin table.
 * While it is held the object cannot be freed or evicted.
 */
public record Pin(long record, int position) {
    public int slot() {
        return dev.depot.core.clients.ClientTableDescriptor.pinnedSlot(record);
    }

    public int generation() {
        return (int) record;
    }
}
