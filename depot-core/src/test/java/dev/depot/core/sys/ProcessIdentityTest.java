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

    private static long parse(String stat) {
        byte[] bytes = stat.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);
        return ProcessIdentity.parseStartTicks(bytes, bytes.length);
    }

    @Test
    void shouldParseField22CountingFromTheLastParenthesisAndRefuseZombiesAndShortText() {
        String after = " 1 1 1 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 ";
        assertEquals(123456, parse("42 (a) (b c) S" + after + "123456 999 7\n"));
        assertEquals(-1, parse("42 (x) Z" + after + "123456 999 7\n"), "a zombie is dead");
        assertEquals(-1, parse("42 (x) X" + after + "123456 999 7\n"));
        assertEquals(-1, parse("42 (x) S 1 1 1"), "too few fields");
        assertEquals(-1, parse("42 no parenthesis"));
        assertEquals(-1, parse("42 (x)"));
        assertEquals(-1, parse(""));
    }

    @Test
    void shouldReadTheSameStartTimeAsTheTextOfTheStatFile() throws Exception {
        long pid = ProcessHandle.current().pid();
        String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        assertEquals(Long.parseLong(fields[19]), ProcessIdentity.startTicks(pid));
    }
}
