package dev.depot.client;

import java.time.Instant;

/**
 * One event of a {@link Subscription}: something happened to an object in the store, or, with type
 * {@link Type#MISSED}, {@link #missed()} events were lost to this subscriber (its buffer was full, or their
 * publisher was killed while writing them). Events are never lost silently.
 *
 * @param type         what happened
 * @param id           the object, null for {@link Type#MISSED}
 * @param dataSize     the object's data bytes (0 for {@link Type#MISSED})
 * @param metadataSize the object's metadata bytes
 * @param missed       for {@link Type#MISSED}: how many events were lost; else 0
 * @param publisherPid the process that performed it (a Java client, or the daemon for evictions, spills, restores
 *                     and the Python client's writes); 0 for {@link Type#MISSED}
 * @param time         when it was published
 */
public record ObjectEvent(Type type, ObjectId id, long dataSize, int metadataSize, long missed, int publisherPid,
                          Instant time) {
    /** What happened. */
    public enum Type {
        /** Sealed: visible to gets from now on. */
        SEALED,
        /** Deleted: gets fail from now on (its memory is freed when the last view closes). */
        DELETED,
        /** Evicted to make room. */
        EVICTED,
        /** A KEEP object written to the spill directory and its memory freed. */
        SPILLED,
        /** A spilled object read back into memory. */
        RESTORED,
        /** Events this subscriber missed ({@link ObjectEvent#missed()} of them). */
        MISSED
    }
}
