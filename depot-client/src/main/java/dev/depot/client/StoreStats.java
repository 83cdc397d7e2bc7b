package dev.depot.client;

import dev.depot.core.store.StoreStatistics;

/**
 * Figures of a store. Bytes are heap bytes, including each object's 64-byte block header and alignment.
 * {@code fragmentation} = 1 - largest free block / free bytes.
 */
public record StoreStats(long capacityBytes, long usedBytes, long freeBytes, long pinnedBytes, long objectCount,
                         long sealedCount, long unsealedBytes, int clientCount, long evictionCount, long evictedBytes,
                         long largestFreeBlock, double fragmentation, long maxObjects, int daemonPid) {
    static StoreStats of(StoreStatistics s) {
        return new StoreStats(s.capacityBytes(), s.usedBytes(), s.freeBytes(), s.pinnedBytes(), s.objectCount(),
            s.sealedCount(), s.unsealedBytes(), s.clientCount(), s.evictionCount(), s.evictedBytes(),
            s.largestFreeBlock(), s.fragmentation(), s.maxObjects(), s.daemonPid());
    }
}
