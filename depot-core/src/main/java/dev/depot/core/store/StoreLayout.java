package dev.depot.core.store;

import static dev.depot.core.store.StoreHeaderDescriptor.*;

import dev.depot.core.clients.ClientTableDescriptor;
import dev.depot.core.index.IndexEntryDescriptor;
import dev.depot.core.memory.Bounds;
import dev.depot.core.notify.NotificationDescriptor;
import dev.depot.errors.StoreFormatException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Where each region of a store file lies. Computed from the configuration when a store is created, and read
 * back (and checked) from the header when it is opened.
 */
public record StoreLayout(long fileLength, long clientTableOffset, int maxClients, int pinsPerClient,
                          long indexOffset, int indexSlots, long notificationOffset, long heapOffset, long heapLength) {
    public static final long PAGE = 4096;
    /** Smallest heap worth having: one page. */
    public static final long MIN_CAPACITY = PAGE;
    /** Largest heap a store may have (1 EiB): far beyond any machine, and small enough that no sum overflows. */
    public static final long MAX_CAPACITY = 1L << 60;

    /** Layout for a heap of {@code capacity} bytes (rounded up to a page). {@code indexSlots} 0 = derive. */
    public static StoreLayout forCapacity(long capacity, int maxClients, int pinsPerClient, int indexSlots) {
        return forCapacity(capacity, maxClients, pinsPerClient, indexSlots, true);
    }

    /**
     * As {@link #forCapacity(long, int, int, int)}; without {@code notifications} (a format 1.1 file) there is no
     * notification region and {@link #notificationOffset} is 0.
     */
    static StoreLayout forCapacity(long capacity, int maxClients, int pinsPerClient, int indexSlots,
                                   boolean notifications) {
        if (capacity < MIN_CAPACITY) {
            throw new IllegalArgumentException("capacity " + capacity + " is below the minimum of " + MIN_CAPACITY + " bytes");
        }
        if (capacity > MAX_CAPACITY) {
            throw new IllegalArgumentException("capacity " + capacity + " bytes is too large (at most " + MAX_CAPACITY
                + " bytes)");
        }
        if (maxClients < 2 || maxClients > 0xffff || pinsPerClient < 1) {
            throw new IllegalArgumentException("maxClients must be 2..65535 and pinsPerClient >= 1, got "
                + maxClients + " and " + pinsPerClient);
        }
        int slots = indexSlots > 0 ? indexSlots : defaultIndexSlots(capacity);
        if (Integer.bitCount(slots) != 1 || slots < 16) {
            throw new IllegalArgumentException("index slots must be a power of two >= 16, got " + slots);
        }
        long heapLength = Bounds.alignUp(capacity, PAGE);
        long clientTableOffset = HEADER_LENGTH;
        long indexOffset = clientTableOffset + ClientTableDescriptor.tableLength(maxClients, pinsPerClient);
        long indexEnd = indexOffset + (long) slots * IndexEntryDescriptor.ENTRY_LENGTH;
        long notificationOffset = notifications ? Bounds.alignUp(indexEnd, PAGE) : 0;
        long heapOffset = notifications ? Bounds.alignUp(notificationOffset + NotificationDescriptor.REGION_LENGTH, PAGE)
            : Bounds.alignUp(indexEnd, PAGE);
        return new StoreLayout(heapOffset + heapLength, clientTableOffset, maxClients, pinsPerClient,
            indexOffset, slots, notificationOffset, heapOffset, heapLength);
    }

    /** One index slot per 16 KiB of heap, at least 4096 and at most 4 Mi, as a power of two. */
    static int defaultIndexSlots(long capacity) {
        long wanted = Math.clamp(capacity / (16 * 1024), 4096, 4L << 20);
        return Integer.highestOneBit((int) wanted - 1) << 1;
    }

    /** True when the file has a notification region (format 1.2 on). */
    public boolean hasNotifications() {
        return notificationOffset != 0;
    }

    public long maxObjects() {
        return IndexEntryDescriptor.maxObjects(indexSlots);
    }

    void writeTo(MemorySegment header) {
        header.set(ValueLayout.JAVA_LONG, FILE_LENGTH_OFFSET, fileLength);
        header.set(ValueLayout.JAVA_LONG, CLIENT_TABLE_OFFSET_OFFSET, clientTableOffset);
        header.set(ValueLayout.JAVA_INT, MAX_CLIENTS_OFFSET, maxClients);
        header.set(ValueLayout.JAVA_INT, PINS_PER_CLIENT_OFFSET, pinsPerClient);
        header.set(ValueLayout.JAVA_LONG, INDEX_OFFSET_OFFSET, indexOffset);
        header.set(ValueLayout.JAVA_INT, INDEX_SLOTS_OFFSET, indexSlots);
        header.set(ValueLayout.JAVA_LONG, NOTIFICATION_OFFSET_OFFSET, notificationOffset);
        header.set(ValueLayout.JAVA_LONG, HEAP_OFFSET_OFFSET, heapOffset);
        header.set(ValueLayout.JAVA_LONG, HEAP_LENGTH_OFFSET, heapLength);
    }

    /** Reads the layout from a header and checks that it describes {@code actualFileLength} bytes consistently. */
    static StoreLayout readFrom(MemorySegment header, long actualFileLength, Object where) {
        var layout = new StoreLayout(
            header.get(ValueLayout.JAVA_LONG, FILE_LENGTH_OFFSET),
            header.get(ValueLayout.JAVA_LONG, CLIENT_TABLE_OFFSET_OFFSET),
            header.get(ValueLayout.JAVA_INT, MAX_CLIENTS_OFFSET),
            header.get(ValueLayout.JAVA_INT, PINS_PER_CLIENT_OFFSET),
            header.get(ValueLayout.JAVA_LONG, INDEX_OFFSET_OFFSET),
            header.get(ValueLayout.JAVA_INT, INDEX_SLOTS_OFFSET),
            header.get(ValueLayout.JAVA_LONG, NOTIFICATION_OFFSET_OFFSET),
            header.get(ValueLayout.JAVA_LONG, HEAP_OFFSET_OFFSET),
            header.get(ValueLayout.JAVA_LONG, HEAP_LENGTH_OFFSET));
        if (layout.fileLength != actualFileLength) {
            throw new StoreFormatException("store file " + where + " is truncated or resized: its header says "
                + layout.fileLength + " bytes but the file has " + actualFileLength
                + "; remove the store directory and create it again");
        }
        // Format 1.1 files have no notification region (and a zero field where its offset is now).
        boolean notifications = header.get(ValueLayout.JAVA_INT, MINOR_VERSION_OFFSET) >= NOTIFICATIONS_MINOR_VERSION;
        var expected = forCapacityUnchecked(layout, notifications, where);
        if (!layout.equals(expected)) {
            throw new StoreFormatException("store file " + where + " has a corrupt header: region table " + layout
                + " is inconsistent (expected " + expected + "); run `depot doctor`");
        }
        return layout;
    }

    private static StoreLayout forCapacityUnchecked(StoreLayout l, boolean notifications, Object where) {
        try {
            return forCapacity(l.heapLength, l.maxClients, l.pinsPerClient, l.indexSlots, notifications);
        } catch (IllegalArgumentException e) {
            throw new StoreFormatException("store file " + where + " has a corrupt header: " + e.getMessage()
                + "; run `depot doctor`");
        }
    }
}
