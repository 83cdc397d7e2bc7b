package dev.depot.errors;

/** A fixed-size table is full: the client table ({@code TOO_MANY_CLIENTS}) or a client's pin table ({@code TOO_MANY_PINS}). */
public class ResourceLimitException extends DepotException {
    private static final long serialVersionUID = 1L;
    private final ErrorCode code;

    public ResourceLimitException(ErrorCode code, String message) {
        super(message);
        this.code = code;
    }

    @Override
    public ErrorCode code() {
        return code;
    }
}
