package dev.depot.errors;

/** An object with this id exists already (sealed or being created). */
public class ObjectExistsException extends DepotException {
    private static final long serialVersionUID = 1L;

    public ObjectExistsException(String message) {
        super(message);
    }

    @Override
    public ErrorCode code() {
        return ErrorCode.OBJECT_EXISTS;
    }
}
