package dev.depot.client;

/** What {@link DepotClient#list()} reports about an object. */
public enum ObjectState {
    /** Being written by its creator; not visible to gets. */
    CREATING,
    /** Immutable and visible. */
    SEALED,
    /** Deleted while pinned: freed when the last view closes. */
    DELETE_PENDING,
    /** Being deleted or evicted right now. */
    DELETING,
    /** A KEEP object written to the daemon's spill directory; a get restores it. */
    SPILLED
}
