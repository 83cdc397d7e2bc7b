package dev.depot.errors;

/** The store file is not a Depot store, is of another major version, is truncated or its header is corrupt. */
public class StoreFormatException extends DepotException {
    private static final long serialVersionUID = 1L;

    public StoreFormatException(String message) {
        super(message);
    }

    @Override
    public ErrorCode code() {
        return ErrorCode.STORE_FORMAT;
    }
}
