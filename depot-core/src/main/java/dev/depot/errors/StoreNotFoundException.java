package dev.depot.errors;

/** There is no store in the directory: start one with {@code depot serve} or open it embedded. */
public class StoreNotFoundException extends DepotException {
    private static final long serialVersionUID = 1L;

    public StoreNotFoundException(String message) {
        super(message);
    }

    @Override
    public ErrorCode code() {
        return ErrorCode.STORE_NOT_FOUND;
    }
}
