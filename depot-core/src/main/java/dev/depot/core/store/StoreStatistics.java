package dev.depot.core.store;

/**
 * A snapshot of a store's figures. {@code fragmentation} is {@code 1 - largestFreeBlock / freeBytes} (0 when
 * all free space is one block). {@code largestFreeBlock} is -1 (and {@code fragmentation} NaN) when it could not
 * be read: the free lists are read under the allocator lock, and a statistics call never waits long for it.
 * {@code kept*} are KEEP objects in memory, {@code spilled*} KEEP objects on disk
 * in {@code spillDirectory} (null when no daemon spills); spilled bytes count as their heap block sizes.
 * {@code spillFailureCount} counts spill files the daemon could not write, {@code restoreFailureCount} spilled
 * objects it could not restore (lost, or no room), each once.
 */
public record StoreStatistics(long capacityBytes, long usedBytes, long freeBytes, long pinnedBytes,
                              long objectCount, long sealedCount, long unsealedBytes, int clientCount,
                              long evictionCount, long evictedBytes, long largestFreeBlock, long maxObjects,
                              int daemonPid, long heartbeatMillis, long keptBytes, long keptObjects,
                              long spilledBytes, long spilledObjects, long spillCount, long restoreCount,
                              String spillDirectory, long spillFailureCount, long restoreFailureCount) {
    public double fragmentation() {
        if (largestFreeBlock < 0) {
            return Double.NaN;
        }
        return freeBytes == 0 ? 0.0 : 1.0 - (double) largestFreeBlock / freeBytes;
    }
}
