package dev.depot.shuffle;

/**
 * A shuffle whose creator died without closing it ({@link Shuffle#findAbandoned}, {@link Shuffle#sweepAbandoned}).
 *
 * @param id         the shuffle id
 * @param creatorPid the pid the dead creator had
 * @param objects    how many of the shuffle's objects the store held when it was found
 * @param bytes      their data bytes
 */
public record AbandonedShuffle(String id, int creatorPid, int objects, long bytes) {
    @Override
    public String toString() {
        return "shuffle " + id + " (creator pid " + creatorPid + " gone; " + objects + " objects, " + bytes + " bytes)";
    }
}
