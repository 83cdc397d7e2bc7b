package dev.depot.errors;

/**
 * Base of every failure Depot reports. Each subclass carries a stable {@link #code()}, which is also the error
 * code on the control protocol ({@code docs/PROTOCOL.md}) and decides the CLI's exit status.
 */
public class DepotException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public DepotException(String message) {
        super(message);
    }

    public DepotException(String message, Throwable cause) {
        super(message, cause);
    }

    /** The wire error code; see {@link ErrorCode}. */
    public ErrorCode code() {
        return ErrorCode.INTERNAL;
    }
}
