package dev.depot.core.sys;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.depot.core.testing.DeadProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** pidfds polled in one call: a child that exits is seen, a running one is not, and every pidfd is closed. */
class ExitWatchTest {
    @BeforeAll
    static void pidfdsExist() {
        int fd = Native.pidfdOpen((int) ProcessHandle.current().pid());
        assumeTrue(fd >= 0, "pidfd_open: " + Native.strerror(-fd));
        Native.close(fd);
    }

    /** pidfds this process has open now. */
    static long openPidfds() throws IOException {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.filter(fd -> {
                try {
                    return Files.readSymbolicLink(fd).toString().contains("pidfd");
                } catch (IOException e) {
                    return false;  // closed meanwhile (the listing's own descriptor)
                }
            }).count();
        }
    }

    private static Process sleeper() throws IOException {
        return new ProcessBuilder("sleep", "60").start();
    }

    private static void stop(Process p) throws InterruptedException {
        p.destroyForcibly();
        p.waitFor();
    }

    @Test
    void shouldReportTheKeyOfAChildThatExitsAndNotOfOneThatRuns() throws Exception {
        Process a = sleeper();
        Process b = sleeper();
        try (ExitWatch watch = new ExitWatch(8)) {
            assertEquals(ExitWatch.Opened.WATCHING, watch.watch(3, (int) a.pid()));
            assertEquals(ExitWatch.Opened.WATCHING, watch.watch(5, (int) b.pid()));
            int[] exited = new int[8];
            assertEquals(0, watch.pollExited(exited));
            stop(a);
            assertEquals(1, watch.pollExited(exited));
            assertEquals(3, exited[0]);
            assertEquals(1, watch.pollExited(exited), "an exited process stays reported until unwatched");
            watch.unwatch(3);
            assertEquals(0, watch.pollExited(exited));
            assertTrue(watch.isWatching(5));
            stop(b);
            assertEquals(1, watch.pollExited(exited));
            assertEquals(5, exited[0], "the record moved into the hole keeps its key");
        } finally {
            stop(a);
            stop(b);
        }
    }

    @Test
    void shouldSayNoSuchProcessForAPidThatIsGone() throws Exception {
        try (ExitWatch watch = new ExitWatch(2)) {
            assertEquals(ExitWatch.Opened.NO_SUCH_PROCESS, watch.watch(0, 0));
            assertEquals(ExitWatch.Opened.NO_SUCH_PROCESS, watch.watch(0, -1));
            long pid = DeadProcess.reapedPid();
            ExitWatch.Opened opened = watch.watch(1, (int) pid);
            // The pid may have been given to a new process meanwhile: then its pidfd is of that process.
            assertTrue(opened == ExitWatch.Opened.NO_SUCH_PROCESS || ProcessIdentity.compute(pid) != 0, opened::name);
        }
    }

    @Test
    void shouldKeepManyRecordsDenseAndCloseEveryPidfd() throws Exception {
        long before = openPidfds();
        Process[] children = new Process[6];
        try {
            for (int i = 0; i < children.length; i++) {
                children[i] = sleeper();
            }
            ExitWatch watch = new ExitWatch(children.length);
            for (int i = 0; i < children.length; i++) {
                assertEquals(ExitWatch.Opened.WATCHING, watch.watch(i, (int) children[i].pid()));
            }
            assertEquals(before + children.length, openPidfds());
            watch.unwatch(0);
            watch.unwatch(4);
            watch.unwatch(4);  // not watched: nothing
            assertEquals(4, watch.size());
            assertEquals(before + 4, openPidfds());
            for (int i : new int[] {1, 5}) {
                stop(children[i]);
            }
            int[] exited = new int[children.length];
            int n = watch.pollExited(exited);
            int[] keys = Arrays.copyOf(exited, n);
            Arrays.sort(keys);
            assertArrayEquals(new int[] {1, 5}, keys);
            watch.close();
            watch.close();
            assertEquals(before, openPidfds(), "close closes every pidfd");
            assertThrows(IllegalStateException.class, () -> watch.pollExited(exited));
        } finally {
            for (Process p : children) {
                if (p != null) {
                    stop(p);
                }
            }
        }
    }

    @Test
    void shouldRefuseAKeyWatchedTwiceOrOutOfRange() throws Exception {
        Process a = sleeper();
        try (ExitWatch watch = new ExitWatch(2)) {
            watch.watch(1, (int) a.pid());
            assertThrows(IllegalStateException.class, () -> watch.watch(1, (int) a.pid()));
            assertThrows(IndexOutOfBoundsException.class, () -> watch.watch(2, (int) a.pid()));
            assertFalse(watch.isWatching(0));
        } finally {
            stop(a);
        }
    }
}
