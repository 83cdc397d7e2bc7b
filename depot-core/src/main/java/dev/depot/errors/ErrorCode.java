package dev.depot.errors;

/**
 * The one table that maps error codes (on the wire and in the CLI) to exceptions and exit statuses.
 */
public enum ErrorCode {
    OK(0, 0),
    INTERNAL(1, 1),
    BAD_REQUEST(2, 2),
    OBJECT_MISSING(3, 3),
    STORE_FULL(4, 4),
    OBJECT_EXISTS(5, 1),
    NOT_SEALED(6, 1),
    TOO_MANY_CLIENTS(7, 1),
    TOO_MANY_PINS(8, 1),
    STORE_FORMAT(9, 1),
    STORE_NOT_FOUND(10, 1),
    VERSION_MISMATCH(11, 1),
    PERMISSION_DENIED(12, 1);

    private static final ErrorCode[] BY_WIRE = values();

    /** Code on the control protocol. */
    public final int wire;
    /** Exit status of the {@code depot} command for this error. */
    public final int exitStatus;

    ErrorCode(int wire, int exitStatus) {
        this.wire = wire;
        this.exitStatus = exitStatus;
    }

    public static ErrorCode ofWire(int wire) {
        return wire >= 0 && wire < BY_WIRE.length ? BY_WIRE[wire] : INTERNAL;
    }

    /** The exception for a wire error code and message, as a client of the protocol would throw it. */
    public DepotException toException(String message) {
        return switch (this) {
            case OBJECT_MISSING -> new ObjectMissingException(message);
            case STORE_FULL -> new StoreFullException(message);
            case OBJECT_EXISTS -> new ObjectExistsException(message);
            case STORE_FORMAT, VERSION_MISMATCH -> new StoreFormatException(message);
            case STORE_NOT_FOUND -> new StoreNotFoundException(message);
            case TOO_MANY_CLIENTS, TOO_MANY_PINS -> new ResourceLimitException(this, message);
            default -> new DepotException(message);
        };
    }
}
