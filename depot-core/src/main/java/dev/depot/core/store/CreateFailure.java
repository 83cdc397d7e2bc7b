package dev.depot.core.store;

import dev.depot.errors.StoreFullException;

/**
 * Why the last attempt of a create found no room, with the figures its message needs. Filled in under the
 * allocator lock from counters (used bytes, kept bytes, the top free bin), never from a scan of the index; the
 * message is built after the lock is released. One per create call, for one thread.
 */
final class CreateFailure {
    private String indexFull;
    private long capacity;
    private long used;
    private long largestFree;
    private long keptBytes;
    private long keptObjects;

    void indexFull(String why) {
        indexFull = why;
    }

    void heapFull(long capacity, long used, long largestFree, long keptBytes, long keptObjects) {
        this.indexFull = null;
        this.capacity = capacity;
        this.used = used;
        this.largestFree = largestFree;
        this.keptBytes = keptBytes;
        this.keptObjects = keptObjects;
    }

    /** True when spilling KEEP objects could make the room (the heap, not the index, is what is full). */
    boolean spillable() {
        return indexFull == null && keptObjects > 0;
    }

    StoreFullException exception(String idText, long dataLength, boolean evicted, String spillError) {
        if (indexFull != null) {
            return new StoreFullException("cannot create object " + idText + ": " + indexFull);
        }
        return new StoreFullException("object " + idText + " needs " + dataLength + " bytes but does not fit "
            + (evicted ? "even after evicting every unpinned object" : "and eviction is off for this create")
            + ": capacity " + capacity + ", free " + (capacity - used) + " (largest free block " + largestFree
            + "), kept " + keptBytes + " in " + keptObjects + " KEEP object(s)"
            + (spillError != null ? "; " + spillError : "")
            + "; raise --capacity, delete objects or release pinned views (`depot stat` shows pinned bytes)");
    }
}
