package dev.depot.core.store;

/**
 * Operations of every client of a store since it was created, summed from the client slots' counters
 * ({@link dev.depot.core.clients.ClientTableDescriptor}): creates, gets (objects pinned by a get or contains),
 * deletes, waits (a get going to sleep on a seal futex word) and wake-ups (a seal waking sleeping gets).
 */
public record OperationCounts(long creates, long gets, long deletes, long waits, long wakeups) {
}
