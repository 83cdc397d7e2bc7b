package dev.depot.core.notify;

/**
 * One event a {@link Subscriber} read: an object event ({@code type} one of {@link EventRecordDescriptor}'s
 * {@code TYPE_*}), or, with {@code type} {@link #TYPE_MISSED}, the number of events this subscriber missed
 * ({@code missed}) because its ring was full or their publisher died while writing them.
 */
public record Event(int type, byte[] id, long dataLength, int metadataLength, int publisherPid, long timeMillis,
                    long missed) {
    /** Not a record type in shared memory: made by the subscriber. */
    public static final int TYPE_MISSED = 0;

    static Event missed(long n) {
        return new Event(TYPE_MISSED, null, 0, 0, 0, System.currentTimeMillis(), n);
    }
}
