package dev.depot.cli;

import dev.depot.client.ObjectId;

/** Object ids from the command line: 40 hex digits, or a name ({@code --name}) hashed as {@link ObjectId#of}. */
final class ObjectIds {
    private ObjectIds() {
    }

    /** Parses 40 hex digits; a wrong id is a usage error. */
    static ObjectId parseHex(String hex) {
        try {
            return ObjectId.fromHex(hex.strip());
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage() + "; ids are 40 hex digits as printed by `depot put` and "
                + "`depot ls`, or use --name NAME", e);
        }
    }
}
