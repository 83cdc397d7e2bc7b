package dev.depot.errors;

/**
 * A store directory or file that this user must not trust: owned by another user, open to group or others, a
 * symbolic link, or not a directory. The message names the owner and mode found and what to do.
 */
public class StoreAccessException extends DepotException {
    private static final long serialVersionUID = 1L;

    public StoreAccessException(String message) {
        super(message);
    }

    @Override
    public ErrorCode code() {
        return ErrorCode.PERMISSION_DENIED;
    }
}
