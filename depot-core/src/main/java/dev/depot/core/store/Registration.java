package dev.depot.core.store;

import dev.depot.core.clients.ClientTable;
import dev.depot.errors.DepotException;
import dev.depot.errors.ErrorCode;
import dev.depot.errors.ResourceLimitException;
import java.nio.file.Path;
import java.util.stream.Collectors;

/**
 * The client slot a process registered in; {@code tookOverDeadSlot} when a dead process held it, whose pins and
 * unsealed objects the new holder must settle ({@link Reaper#settleTakenOverSlot}) before it uses the slot.
 */
record Registration(int slot, boolean tookOverDeadSlot) {
    /** How long a registration waits for a live client to leave or die when every slot is taken. */
    private static final long WAIT_NANOS = 1_500_000_000L;
    /** How long it sleeps between looks at the client table. */
    private static final long RETRY_MILLIS = 20;
    /** How many pids of live clients a "too many clients" message names. */
    private static final int PIDS_NAMED = 8;

    /**
     * Claims a free client slot, else takes over one whose process is dead (settled by the caller), else waits up
     * to {@link #WAIT_NANOS} for a live client to leave or die. A dead process's slot never keeps anyone out, with
     * or without a daemon.
     *
     * @param directory the store's directory, for the message
     */
    static Registration claim(ClientTable clients, int kind, Path directory) {
        long deadline = System.nanoTime() + WAIT_NANOS;
        while (true) {
            int slot = clients.register(kind);
            if (slot >= 0) {
                return new Registration(slot, false);
            }
            slot = clients.takeOverDead(kind);
            if (slot >= 0) {
                return new Registration(slot, true);
            }
            if (System.nanoTime() > deadline) {
                throw new ResourceLimitException(ErrorCode.TOO_MANY_CLIENTS, "the store at " + directory
                    + " has all " + clients.maxClients() + " client slots taken by live processes (pids "
                    + clients.registeredPids(PIDS_NAMED).stream().map(String::valueOf).collect(Collectors.joining(", "))
                    + (clients.maxClients() > PIDS_NAMED ? ", ..." : "") + "); close a client or recreate the store"
                    + " with a larger --max-clients");
            }
            try {
                Thread.sleep(RETRY_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new DepotException("interrupted while waiting for a free client slot");
            }
        }
    }
}
