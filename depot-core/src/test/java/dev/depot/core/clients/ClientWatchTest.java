package dev.depot.core.clients;

import static dev.depot.core.clients.ClientTableDescriptor.IDENTITY_OFFSET;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.core.memory.Atomics;
import dev.depot.core.sys.Native;
import dev.depot.core.sys.ProcessIdentity;
import dev.depot.core.testing.DeadProcess;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The reaper's liveness check, with pidfds and with {@code /proc} alone: real child processes that exit are found
 * dead, running ones never, and a pid now held by another process (another start time) is not taken for alive.
 */
class ClientWatchTest {
    private static final int CLIENTS = 6;
    private static final int PINS = 2;
    /** The slot the watching process itself holds (never reported). */
    private static final int SELF = 5;

    private Arena arena;
    private ClientTable table;
    private final List<Process> children = new ArrayList<>();
    private final List<String> logged = new ArrayList<>();

    @BeforeEach
    void allocate() {
        arena = Arena.ofConfined();
        table = new ClientTable(arena.allocate(ClientTableDescriptor.tableLength(CLIENTS, PINS), 128), CLIENTS, PINS);
    }

    @AfterEach
    void release() throws InterruptedException {
        for (Process p : children) {
            p.destroyForcibly();
            p.waitFor();
        }
        arena.close();
    }

    private long child() throws IOException {
        Process p = new ProcessBuilder("sleep", "60").start();
        children.add(p);
        long identity = ProcessIdentity.compute(p.pid());
        assertTrue(identity != 0, "child " + p.pid() + " has an identity");
        return identity;
    }

    private void stop(long identity) throws InterruptedException {
        for (Process p : children) {
            if (p.pid() == ProcessIdentity.pidOf(identity)) {
                p.destroyForcibly();
                p.waitFor();
            }
        }
    }

    private void setIdentity(int slot, long identity) {
        Atomics.putLongVolatile(table.slot(slot), IDENTITY_OFFSET, identity);
    }

    private ClientWatch watch(boolean pidfds) {
        return new ClientWatch(table, SELF, pidfds, logged::add);
    }

    /** One round; the dead found are freed as the reaper frees them. */
    private List<String> round(ClientWatch watch) {
        List<String> dead = new ArrayList<>();
        int n = watch.findDead((client, identity) -> {
            dead.add(client + ":" + ProcessIdentity.pidOf(identity));
            table.release(client, identity);
        });
        assertEquals(dead.size(), n);
        return dead;
    }

    private static boolean pidfdsExist() {
        int fd = Native.pidfdOpen((int) ProcessHandle.current().pid());
        if (fd >= 0) {
            Native.close(fd);
        }
        return fd >= 0;
    }

    @ParameterizedTest(name = "pidfds {0}")
    @ValueSource(booleans = {true, false})
    void shouldFindAClientWhoseProcessExitsAndNoOtherOnce(boolean pidfds) throws Exception {
        long a = child();
        long b = child();
        setIdentity(0, a);
        setIdentity(2, b);
        setIdentity(SELF, DeadProcess.identity());
        try (ClientWatch watch = watch(pidfds)) {
            assertEquals(List.of(), round(watch));
            assertEquals(List.of(), round(watch));
            assertEquals(pidfds && pidfdsExist() ? 2 : 0, watch.watchedByPidfd());
            stop(a);
            assertEquals(List.of("0:" + ProcessIdentity.pidOf(a)), round(watch));
            assertEquals(List.of(), round(watch), "reported once, and its slot is free now");
            assertEquals(0, table.identity(0));
            stop(b);
            assertEquals(List.of("2:" + ProcessIdentity.pidOf(b)), round(watch));
            assertEquals(0, watch.watchedByPidfd(), "the pidfds of freed slots are closed");
        }
        assertEquals(List.of(), logged);
    }

    @ParameterizedTest(name = "pidfds {0}")
    @ValueSource(booleans = {true, false})
    void shouldNotTakeAPidHeldByAnotherProcessForTheClient(boolean pidfds) throws Exception {
        long running = child();
        // The running child's pid with another start time: the client had this pid, died, and the pid was reused.
        long reused = running ^ 1;
        setIdentity(1, reused);
        long gone = DeadProcess.identity();
        setIdentity(3, gone);
        setIdentity(4, running);
        try (ClientWatch watch = watch(pidfds)) {
            assertEquals(List.of("1:" + ProcessIdentity.pidOf(reused), "3:" + ProcessIdentity.pidOf(gone)), round(watch));
            assertEquals(List.of(), round(watch), "the live client stays");
        }
    }

    @ParameterizedTest(name = "pidfds {0}")
    @ValueSource(booleans = {true, false})
    void shouldWatchTheNewProcessOfASlotTakenOver(boolean pidfds) throws Exception {
        long first = child();
        long second = child();
        setIdentity(0, first);
        try (ClientWatch watch = watch(pidfds)) {
            assertEquals(List.of(), round(watch));
            // The first client dies and, before a round, a new process takes its slot over (ClientTable.takeOverDead).
            stop(first);
            setIdentity(0, second);
            assertEquals(List.of(), round(watch), "the slot's process now is alive");
            assertEquals(pidfds && pidfdsExist() ? 1 : 0, watch.watchedByPidfd());
            stop(second);
            assertEquals(List.of("0:" + ProcessIdentity.pidOf(second)), round(watch));
        }
    }

    @ParameterizedTest(name = "pidfds {0}")
    @ValueSource(booleans = {true, false})
    void shouldFindAClientAgainWhenItsReclaimFailed(boolean pidfds) throws Exception {
        long a = child();
        setIdentity(0, a);
        try (ClientWatch watch = watch(pidfds)) {
            assertEquals(List.of(), round(watch));
            stop(a);
            List<Long> found = new ArrayList<>();
            watch.findDead((client, identity) -> found.add(identity));  // not freed: the reclaim "failed"
            watch.findDead((client, identity) -> found.add(identity));
            assertEquals(List.of(a, a), found);
        }
    }
}
