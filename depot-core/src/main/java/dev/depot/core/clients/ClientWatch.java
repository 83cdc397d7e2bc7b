package dev.depot.core.clients;

import dev.depot.core.sys.ExitWatch;
import dev.depot.core.sys.Native;
import dev.depot.core.sys.ProcessIdentity;
import java.util.function.Consumer;

/**
 * The daemon's reaper's view of which registered clients are gone, cheap enough to ask ten times a second with a
 * thousand clients. A client's identity (pid and start time, {@link ProcessIdentity}) is checked against
 * {@code /proc} once, when it first appears in its slot, and a pidfd is opened for it then; after that each round
 * reads the slots' identities and polls all the pidfds in one {@code poll} call that does not wait. A pidfd that
 * turns readable (its process exited) is only a reason to look: the client is reported dead once {@code /proc}
 * confirms it, so a live client is never reclaimed on the word of a pidfd alone.
 *
 * <p>Where no pidfd can be had the client's {@code /proc/PID/stat} is read every round instead: for every client
 * when the kernel has no {@code pidfd_open} (before Linux 5.3) or forbids it, for one client when the daemon is out
 * of file descriptors (said once in the log). A slot whose identity changes (freed, or taken over by another
 * process) has its pidfd closed and the new identity checked afresh.
 *
 * <p>Lifecycle: owned by the reaper thread that made it; {@link #close} closes every pidfd.
 */
public final class ClientWatch implements AutoCloseable {
    /** Told of each client found dead. */
    @FunctionalInterface
    public interface DeadClient {
        /** Client slot {@code client}, registered with {@code identity}, belongs to a process that is gone. */
        void found(int client, long identity);
    }

    private final ClientTable clients;
    private final int self;
    private final Consumer<String> log;
    /** The pidfds, or null when they are not used. */
    private final ExitWatch exits;
    /** The identity checked in each slot (0: none): watched by its pidfd, or by {@code /proc} when {@link #byProc}. */
    private final long[] watched;
    private final boolean[] byProc;
    private final int[] exited;
    private boolean pidfds;
    private boolean toldOutOfDescriptors;

    /**
     * A watch over {@code clients}, skipping slot {@code self} (the daemon's own); with {@code usePidfds} false it
     * reads {@code /proc} for every client every round. {@code log} is told once when pidfds cannot be had.
     */
    public ClientWatch(ClientTable clients, int self, boolean usePidfds, Consumer<String> log) {
        this.clients = clients;
        this.self = self;
        this.log = log;
        int slots = clients.maxClients();
        this.watched = new long[slots];
        this.byProc = new boolean[slots];
        this.exited = new int[slots];
        this.pidfds = usePidfds;
        this.exits = usePidfds ? new ExitWatch(slots) : null;
    }

    /**
     * Tells {@code dead} of every registered client whose process is gone (pid gone, or reused by a process with
     * another start time), and forgets it; returns how many. A client the caller fails to reclaim is found again
     * next time, as its slot still names it.
     */
    public int findDead(DeadClient dead) {
        int found = 0;
        for (int c = 0; c < watched.length; c++) {
            if (c == self) {
                continue;
            }
            long identity = clients.identity(c);
            if (identity != watched[c]) {
                forget(c);
                if (identity != 0 && !startWatching(c, identity)) {
                    found++;
                    dead.found(c, identity);
                }
            } else if (identity != 0 && byProc[c] && !ProcessIdentity.isAlive(identity)) {
                forget(c);
                found++;
                dead.found(c, identity);
            }
        }
        if (exits == null || exits.size() == 0) {
            return found;
        }
        int n = exits.pollExited(exited);
        if (n < 0) {  // nothing is known of the pidfds this round: ask /proc about each
            for (int c = 0; c < watched.length; c++) {
                if (watched[c] != 0 && !byProc[c] && !ProcessIdentity.isAlive(watched[c])) {
                    long identity = watched[c];
                    forget(c);
                    found++;
                    dead.found(c, identity);
                }
            }
            return found;
        }
        for (int i = 0; i < n; i++) {
            int c = exited[i];
            long identity = watched[c];
            forget(c);
            if (!startWatching(c, identity)) {  // confirms with /proc; a spurious wake-up just watches again
                found++;
                dead.found(c, identity);
            }
        }
        return found;
    }

    /** How many clients are watched through a pidfd (the others, through {@code /proc}). */
    public int watchedByPidfd() {
        return exits == null ? 0 : exits.size();
    }

    /** Closes every pidfd. */
    @Override
    public void close() {
        if (exits != null) {
            exits.close();
        }
    }

    /**
     * Checks {@code identity}, new in slot {@code c}, and watches it from now on; false (and not watched) when its
     * process is gone already.
     */
    private boolean startWatching(int c, long identity) {
        int pid = ProcessIdentity.pidOf(identity);
        if (pidfds) {
            switch (exits.watch(c, pid)) {
                case WATCHING -> {
                    // Checked after the open: the process with this pid now is the one the pidfd refers to.
                    if (!ProcessIdentity.isAlive(identity)) {
                        exits.unwatch(c);
                        return false;
                    }
                    watched[c] = identity;
                    byProc[c] = false;
                    return true;
                }
                case NO_SUCH_PROCESS -> {
                    return false;
                }
                case UNSUPPORTED -> {
                    pidfds = false;
                    log.accept("the reaper cannot use pidfds here (pidfd_open: " + Native.strerror(exits.lastErrno())
                        + "); it reads /proc/PID/stat of every client every round instead, which costs CPU with"
                        + " many clients (Linux 5.3 or later has pidfds)");
                }
                case OUT_OF_DESCRIPTORS, FAILED -> {
                    if (!toldOutOfDescriptors) {
                        toldOutOfDescriptors = true;
                        log.accept("the reaper cannot open a pidfd for client pid " + pid + " ("
                            + Native.strerror(exits.lastErrno()) + "); it reads /proc/PID/stat of such clients every"
                            + " round instead, which costs CPU with many clients: raise the daemon's open-file limit"
                            + " (ulimit -n)");
                    }
                }
            }
        }
        if (!ProcessIdentity.isAlive(identity)) {
            return false;
        }
        watched[c] = identity;
        byProc[c] = true;
        return true;
    }

    private void forget(int c) {
        if (exits != null) {
            exits.unwatch(c);
        }
        watched[c] = 0;
        byProc[c] = false;
    }
}
