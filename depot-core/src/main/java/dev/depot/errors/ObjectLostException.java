package dev.depot.errors;

/**
 * A get waited for a spilled object that the daemon could not restore, because its spill file is missing or
 * damaged: the object is gone (the daemon dropped its entry), never served from a bad file. The message names the
 * object, the file and what was wrong with it.
 */
public class ObjectLostException extends ObjectMissingException {
    private static final long serialVersionUID = 1L;

    public ObjectLostException(String message) {
        super(message);
    }
}
