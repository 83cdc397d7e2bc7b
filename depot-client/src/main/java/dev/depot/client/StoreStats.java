package dev.depot.client;

import dev.depot.core.store.StoreStatistics;

/**
 * Figures of a store. Bytes are heap bytes, including each object's 64-byte block header and alignment.
 * {@code fragmentation} = 1 - largest free block / free bytes. {@code kept*}: objects created with
 * {@code KEEP} now in memory; {@code spilled*}: those on disk in {@code spillDirectory} (null: no spilling).
 * {@code spillFailureCount}: spill files the daemon could not write plus spilled objects it could not restore.
 */
public record StoreStats(long capacityBytes, long usedBytes, long freeBytes, long pinnedBytes, long objectCount,
                         long sealedCount, long unsealedBytes, int clientCount, long evictionCount, long evictedBytes,
                         long largestFreeBlock, double fragmentation, long maxObjects, int daemonPid,
                         long keptBytes, long keptObjects, long spilledBytes, long spilledObjects, long spillCount,
                         long restoreCount, String spillDirectory, long spillFailureCount) {
    static StoreStats of(StoreStatistics s) {
        return new StoreStats(s.capacityBytes(), s.usedBytes(), s.freeBytes(), s.pinnedBytes(), s.objectCount(),
            s.sealedCount(), s.unsealedBytes(), s.clientCount(), s.evictionCount(), s.evictedBytes(),
            s.largestFreeBlock(), s.fragmentation(), s.maxObjects(), s.daemonPid(), s.keptBytes(), s.keptObjects(),
            s.spilledBytes(), s.spilledObjects(), s.spillCount(), s.restoreCount(), s.spillDirectory(),
            s.spillFailureCount() + s.restoreFailureCount());
    }
}
