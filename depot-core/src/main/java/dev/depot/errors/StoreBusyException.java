package dev.depot.errors;

/**
 * The store's allocator lock stayed held by another live process for longer than a change may wait (see
 * {@code AllocationLock}): typically a process stopped with SIGSTOP or frozen in a debugger while it held it.
 * The message names the holder's pid and how long it was waited for. Reads never need the lock.
 */
public class StoreBusyException extends DepotException {
    private static final long serialVersionUID = 1L;

    public StoreBusyException(String message) {
        super(message);
    }
}
