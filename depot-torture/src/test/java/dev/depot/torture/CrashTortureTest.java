package dev.depot.torture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The short crash-torture runs CI does; {@code scripts/torture --minutes N} runs long ones. */
class CrashTortureTest {
    @Test
    void shouldLoseNothingAndLeakNothingWhenClientsAreKilled() throws Exception {
        Torture.Result r = Torture.run(3, 50, 0, false, 42);
        assertTrue(r.ok(), () -> String.join("\n", r.problems()));
        assertEquals(50, r.kills());
        assertTrue(r.objectsVerified() > 0);
    }

    @Test
    void shouldLoseNothingWhenTheDaemonIsKilledToo() throws Exception {
        Torture.Result r = Torture.run(2, 10, 0, true, 7);
        assertTrue(r.ok(), () -> String.join("\n", r.problems()));
        assertEquals(2, r.daemonKills());
    }

    @Test
    void shouldLoseNothingWhenPythonClientsWritingInSharedMemoryAndTheDaemonAreKilled() throws Exception {
        // Python creates and seals without the daemon, so a daemon kill meets Python clients mid-create and
        // holding the allocator lock; the next daemon (and Java's recovery) must settle them.
        Torture.Result r = Torture.run(1, 2, 6, 0, true, 11);
        assertTrue(r.ok(), () -> String.join("\n", r.problems()));
        assertTrue(r.daemonKills() > 0, r::toString);
    }

    @Test
    void shouldReclaimThePinsAndUnsealedObjectsOfKilledPythonClients() throws Exception {
        Torture.Result r = Torture.run(1, 2, 5, 0, false, 5);
        assertTrue(r.ok(), () -> String.join("\n", r.problems()));
        assertEquals(5, r.kills());
        assertTrue(r.pythonKills() > 0, r::toString);
    }
}
