package dev.depot.core.store;

import dev.depot.core.index.EntryState;

/** A snapshot of one index entry, for listings. */
public record ObjectEntry(byte[] id, EntryState state, long dataLength, int metadataLength, int pins,
                          long createTimeMillis, long lastAccessMillis) {
}
