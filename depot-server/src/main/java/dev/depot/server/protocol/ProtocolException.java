package dev.depot.server.protocol;

import dev.depot.errors.DepotException;
import dev.depot.errors.ErrorCode;

/** A frame or message that breaks the control protocol: wrong length, unknown type, bad field. */
public final class ProtocolException extends DepotException {
    private static final long serialVersionUID = 1L;

    public ProtocolException(String message) {
        super(message);
    }

    @Override
    public ErrorCode code() {
        return ErrorCode.BAD_REQUEST;
    }
}
