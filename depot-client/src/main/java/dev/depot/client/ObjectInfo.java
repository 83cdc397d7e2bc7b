package dev.depot.client;

import java.time.Instant;

/** One object as listed by {@link DepotClient#list()}. */
public record ObjectInfo(ObjectId id, ObjectState state, long dataSize, int metadataSize, int pinCount,
                         Instant created, Instant lastAccess) {
}
