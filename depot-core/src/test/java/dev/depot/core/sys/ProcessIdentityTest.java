package dev.depot.core.sys;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.core.testing.DeadProcess;
import dev.depot.core.testing.ShmDir;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import org.junit.jupiter.api.Test;

class ProcessIdentityTest {
    @Test
    void shouldSeeItselfAlive() {
        long self = ProcessIdentity.self();
        assertTrue(ProcessIdentity.isAlive(self));
        assertEquals(ProcessHandle.current().pid(), ProcessIdentity.pidOf(self));
        assertEquals(self, ProcessIdentity.compute(ProcessHandle.current().pid()));
    }

    @Test
    void shouldSeeARunningChildAliveAndTheSameChildDeadOnceReaped() throws Exception {
        Process child = new ProcessBuilder("sleep", "60").start();
        try {
            long identity = ProcessIdentity.compute(child.pid());
            assertNotEquals(0, identity);
            assertTrue(ProcessIdentity.isAlive(identity));
            child.destroyForcibly();
            child.waitFor();
            assertFalse(ProcessIdentity.isAlive(identity));
        } finally {
            child.destroyForcibly();
            child.waitFor();
        }
    }

    @Test
    void shouldSeeAReapedChildDead() throws Exception {
        assertFalse(ProcessIdentity.isAlive(DeadProcess.identity()));
        assertFalse(ProcessIdentity.isAlive(0));
    }

    @Test
    void shouldNotMistakeAnotherStartTimeOfTheSamePidForTheProcess() {
        long self = ProcessIdentity.self();
        assertFalse(ProcessIdentity.isAlive(self ^ 1), "same pid, other start time: a reused pid");
    }

    @Test
    void shouldReadTheStartTimeOfAProcessWhoseNameHasSpacesAndParentheses() throws Exception {
        try (ShmDir dir = new ShmDir()) {
            Files.createDirectories(dir.path());
            Path odd = dir.path().resolve("a) (b c");
            Files.copy(Path.of("/bin/sleep"), odd, StandardCopyOption.COPY_ATTRIBUTES);
            Process child = new ProcessBuilder(odd.toString(), "60").start();
            try {
                assertTrue(Files.readString(Path.of("/proc", Long.toString(child.pid()), "stat")).contains("(a) (b c)"));
                long identity = ProcessIdentity.compute(child.pid());
                assertNotEquals(0, identity);
                assertTrue(ProcessIdentity.isAlive(identity));
            } finally {
                child.destroyForcibly();
                child.waitFor();
            }
        }
    }
}
