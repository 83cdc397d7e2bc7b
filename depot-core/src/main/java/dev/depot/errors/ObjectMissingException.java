package dev.depot.errors;

/** The object does not exist or was not sealed within the timeout. */
public class ObjectMissingException extends DepotException {
    private static final long serialVersionUID = 1L;

    public ObjectMissingException(String message) {
        super(message);
    }

    @Override
    public ErrorCode code() {
        return ErrorCode.OBJECT_MISSING;
    }
}
