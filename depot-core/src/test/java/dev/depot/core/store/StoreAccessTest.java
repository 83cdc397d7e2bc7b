package dev.depot.core.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.depot.core.testing.ShmDir;
import dev.depot.errors.DepotException;
import dev.depot.errors.ErrorCode;
import dev.depot.errors.StoreAccessException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import org.junit.jupiter.api.Test;

/**
 * A store directory or file that another user could have made or can reach is refused, on create and on open.
 * The cases with another owner need root (to chown to {@code nobody}); elsewhere they are skipped.
 */
class StoreAccessTest {
    private static final StoreLayout SMALL = StoreFileTest.SMALL;

    private static void chmod(Path p, String perms) throws IOException {
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString(perms));
    }

    private static void chownToNobody(Path p) throws IOException {
        assumeTrue("root".equals(System.getProperty("user.name")), "giving a file to nobody needs root");
        UserPrincipal nobody = p.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody");
        Files.setOwner(p, nobody);
    }

    private static void createStore(Path dir) throws IOException {
        StoreFile.create(dir, SMALL).close();
    }

    @Test
    void shouldRefuseADirectoryOthersCanEnter() throws IOException {
        try (ShmDir dir = new ShmDir()) {
            chmod(dir.createPrivate(), "rwxrwxrwx");
            var e = assertThrows(StoreAccessException.class, () -> StoreFile.create(dir.path(), SMALL));
            assertTrue(e.getMessage().startsWith("the store directory " + dir.path() + " (owner "), e.getMessage());
            assertTrue(e.getMessage().contains("has mode 0777: other users can enter it"), e.getMessage());
            assertTrue(e.getMessage().contains("chmod 700 " + dir.path()), e.getMessage());
            assertEquals(ErrorCode.PERMISSION_DENIED, e.code());
            assertThrows(StoreAccessException.class, () -> StoreFile.open(dir.path()));
            chmod(dir.path(), "rwx--x--x");
            assertThrows(StoreAccessException.class, () -> StoreFile.create(dir.path(), SMALL), "search bits too");
        }
    }

    @Test
    void shouldRefuseADirectoryOfAnotherUser() throws IOException {
        try (ShmDir dir = new ShmDir()) {
            createStore(dir.path());
            chownToNobody(dir.path());
            var e = assertThrows(StoreAccessException.class, () -> StoreFile.open(dir.path()));
            assertTrue(e.getMessage().startsWith("the store directory " + dir.path() + " belongs to nobody (uid "),
                e.getMessage());
            assertTrue(e.getMessage().contains("not to you (root (uid 0)), mode 0700"), e.getMessage());
        }
    }

    @Test
    void shouldRefuseADirectoryThatIsASymbolicLink() throws IOException {
        try (ShmDir real = new ShmDir(); ShmDir link = new ShmDir()) {
            createStore(real.path());
            Files.createSymbolicLink(link.path(), real.path());
            var e = assertThrows(StoreAccessException.class, () -> StoreFile.open(link.path()));
            assertTrue(e.getMessage().startsWith("the store directory " + link.path() + " is a symbolic link (to "
                + real.path() + ")"), e.getMessage());
            assertThrows(StoreAccessException.class, () -> StoreFile.create(link.path(), SMALL));
        }
    }

    @Test
    void shouldRefuseAStoreFileOthersCanReadOrWrite() throws IOException {
        try (ShmDir dir = new ShmDir()) {
            createStore(dir.path());
            Path file = StoreFile.fileIn(dir.path());
            chmod(file, "rw-rw-rw-");
            var e = assertThrows(StoreAccessException.class, () -> StoreFile.open(dir.path()));
            assertTrue(e.getMessage().startsWith("the store file " + file + " (owner "), e.getMessage());
            assertTrue(e.getMessage().contains("has mode 0666: other users can map it"), e.getMessage());
            assertTrue(e.getMessage().contains("chmod 600 " + file), e.getMessage());
            chmod(file, "rw-r-----");
            assertThrows(StoreAccessException.class, () -> StoreFile.open(dir.path()), "group read too");
            chmod(file, "rw-------");
            StoreFile.open(dir.path()).close();
        }
    }

    @Test
    void shouldRefuseAStoreFileOfAnotherUser() throws IOException {
        try (ShmDir dir = new ShmDir()) {
            createStore(dir.path());
            Path file = StoreFile.fileIn(dir.path());
            chownToNobody(file);
            var e = assertThrows(StoreAccessException.class, () -> StoreFile.open(dir.path()));
            assertTrue(e.getMessage().startsWith("the store file " + file + " belongs to nobody (uid "), e.getMessage());
            assertTrue(e.getMessage().contains("mode 0600"), e.getMessage());
        }
    }

    @Test
    void shouldRefuseAStoreFileThatIsASymbolicLink() throws IOException {
        try (ShmDir real = new ShmDir(); ShmDir dir = new ShmDir()) {
            createStore(real.path());
            Files.createSymbolicLink(StoreFile.fileIn(dir.createPrivate()), StoreFile.fileIn(real.path()));
            var e = assertThrows(StoreAccessException.class, () -> StoreFile.open(dir.path()));
            assertTrue(e.getMessage().startsWith("the store file " + StoreFile.fileIn(dir.path()) + " is a symbolic link"),
                e.getMessage());
        }
    }

    @Test
    void shouldSayThatARegularFileIsNotADirectory() throws IOException {
        try (ShmDir dir = new ShmDir()) {
            Files.write(dir.path(), new byte[1]);
            for (var attempt : new org.junit.jupiter.api.function.Executable[] {
                () -> StoreFile.create(dir.path(), SMALL), () -> StoreFile.open(dir.path())}) {
                var e = assertThrows(StoreAccessException.class, attempt);
                assertTrue(e.getMessage().startsWith(dir.path() + " is not a directory"), e.getMessage());
            }
            assertTrue(Files.isRegularFile(dir.path()), "left alone");
        }
    }

    @Test
    void shouldRemoveTheDirectoryItMadeWhenTheCreateFails() {
        try (ShmDir dir = new ShmDir()) {
            // More than /dev/shm can reserve: posix_fallocate fails.
            var huge = StoreLayout.forCapacity(1L << 50, 4, 16, 16);
            var e = assertThrows(DepotException.class, () -> StoreFile.create(dir.path(), huge));
            assertTrue(e.getMessage().startsWith("cannot reserve "), e.getMessage());
            assertTrue(Files.notExists(dir.path()), "no empty directory is left behind");
        }
    }

    @Test
    void shouldCreateTheStorePrivateEvenUnderAPermissiveUmaskAndCheckIt() throws IOException {
        try (ShmDir dir = new ShmDir()) {
            createStore(dir.path());
            assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.path())));
            assertEquals("rw-------", PosixFilePermissions.toString(
                Files.getPosixFilePermissions(StoreFile.fileIn(dir.path()))));
            StoreFile.open(dir.path()).close();
        }
    }

    @Test
    void shouldBelieveNoDaemonNamedInAStoreOthersCouldHaveWritten() throws IOException {
        try (ShmDir dir = new ShmDir()) {
            try (StoreFile f = StoreFile.create(dir.path(), SMALL)) {
                dev.depot.core.memory.Atomics.putLongVolatile(f.header(), StoreHeaderDescriptor.DAEMON_IDENTITY_OFFSET,
                    dev.depot.core.sys.ProcessIdentity.self());
            }
            assertEquals(dev.depot.core.sys.ProcessIdentity.self(), StoreFile.probeDaemonIdentity(dir.path()));
            chmod(dir.path(), "rwxrwxrwx");
            assertEquals(0, StoreFile.probeDaemonIdentity(dir.path()), "a squatter could have named any live pid");
        }
    }
}
