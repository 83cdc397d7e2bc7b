package dev.depot.errors;

/** A create did not fit even after evicting every unpinned object (or eviction was off); the message gives requested, capacity, free and pinned bytes. */
public class StoreFullException extends DepotException {
    private static final long serialVersionUID = 1L;

    public StoreFullException(String message) {
        super(message);
    }

    @Override
    public ErrorCode code() {
        return ErrorCode.STORE_FULL;
    }
}
