package dev.depot.server.spill;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.depot.client.testing.TempStore;
import dev.depot.errors.StoreAccessException;
import dev.depot.server.DepotServer;
import dev.depot.server.ServerConfig;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A spill directory follows the store directory's rules: made 0700 with 0600 files, and refused when another
 * user owns it, others can enter it, it is a symbolic link, or it would be made where others could swap it. The
 * cases with another owner need root (to chown to {@code nobody}); elsewhere they are skipped.
 */
class SpillDirectoryTest {
    private TempStore temp;
    private Path base;

    @BeforeEach
    void setUp() throws IOException {
        temp = new TempStore();
        base = Files.createDirectories(temp.dir().resolve("base"));
    }

    @AfterEach
    void tearDown() {
        temp.close();
    }

    private static String mode(Path p) throws IOException {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS));
    }

    private static void chmod(Path p, String perms) throws IOException {
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString(perms));
    }

    private static void chownToNobody(Path p) throws IOException {
        assumeTrue("root".equals(System.getProperty("user.name")), "giving a directory to nobody needs root");
        UserPrincipal nobody = p.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody");
        Files.setOwner(p, nobody);
    }

    @Test
    void shouldMakeTheDirectoryAndItsParentsPrivateAndItsFilesOwnerOnly() throws IOException {
        chmod(base, "rwxr-xr-x");
        Path dir = base.resolve("a").resolve("spill");
        SpillFiles files = new SpillFiles(dir);
        assertEquals("rwx------", mode(dir));
        assertEquals("rwx------", mode(dir.getParent()));
        byte[] id = new byte[SpillFileDescriptor.ID_LENGTH];
        Path tmp = files.writeTemporary(id, 0, 1, 8, 0, MemorySegment.ofArray(new byte[8]));
        assertEquals("rw-------", mode(tmp));
        files.publish(tmp);
        assertEquals("rw-------", mode(files.path(id, 0, 1)));
    }

    @Test
    void shouldRefuseADirectoryOthersCanWriteEvenWhenRootOwnsIt() throws IOException {
        Path dir = Files.createDirectory(base.resolve("spill"));
        chmod(dir, "rwxrwxrwx");
        var e = assertThrows(StoreAccessException.class, () -> new SpillFiles(dir));
        assertTrue(e.getMessage().startsWith("the spill directory " + dir + " (owner "), e.getMessage());
        assertTrue(e.getMessage().contains("has mode 0777"), e.getMessage());
        assertTrue(e.getMessage().contains("chmod 700 " + dir), e.getMessage());
        chmod(dir, "rwxr-xr-x");
        assertThrows(StoreAccessException.class, () -> new SpillFiles(dir), "readable by others: spilled data leaks");
    }

    @Test
    void shouldRefuseADirectoryOfAnotherUser() throws IOException {
        Path dir = Files.createDirectory(base.resolve("spill"));
        chmod(dir, "rwx------");
        chownToNobody(dir);
        var e = assertThrows(StoreAccessException.class, () -> new SpillFiles(dir));
        assertTrue(e.getMessage().contains("belongs to nobody"), e.getMessage());
        assertTrue(e.getMessage().contains("use another --spill-dir"), e.getMessage());
    }

    @Test
    void shouldRefuseASymbolicLinkEvenToAPrivateDirectory() throws IOException {
        Path real = Files.createDirectory(base.resolve("real"));
        chmod(real, "rwx------");
        Path link = Files.createSymbolicLink(base.resolve("spill"), real);
        var e = assertThrows(StoreAccessException.class, () -> new SpillFiles(link));
        assertTrue(e.getMessage().contains("is a symbolic link (to " + real + ")"), e.getMessage());
    }

    @Test
    void shouldRefuseToMakeTheDirectoryWhereOthersCouldSwapIt() throws IOException {
        Path open = Files.createDirectory(base.resolve("open"));
        chmod(open, "rwxrwxrwx");
        var e = assertThrows(StoreAccessException.class, () -> new SpillFiles(open.resolve("spill")));
        assertTrue(e.getMessage().contains("would be made in " + open + ", mode 0777"), e.getMessage());
        assertTrue(Files.notExists(open.resolve("spill")), "nothing made");

        Path theirs = Files.createDirectory(base.resolve("theirs"));
        chownToNobody(theirs);
        e = assertThrows(StoreAccessException.class, () -> new SpillFiles(theirs.resolve("spill")));
        assertTrue(e.getMessage().contains("belongs to nobody"), e.getMessage());
    }

    @Test
    void shouldMakeTheDirectoryInAStickyDirectoryOthersCanWrite() throws IOException {
        Path sticky = Files.createDirectory(base.resolve("sticky"));
        Files.setAttribute(sticky, "unix:mode", 01777);
        Path dir = sticky.resolve("spill");
        new SpillFiles(dir);
        assertEquals("rwx------", mode(dir));
    }

    @Test
    void shouldNotStartADaemonOnAnUnsafeSpillDirectory() throws IOException {
        Path dir = Files.createDirectory(base.resolve("spill"));
        chmod(dir, "rwxrwxrwx");
        ServerConfig config = ServerConfig.defaults().withDirectory(temp.dir().resolve("store")).withCapacity(4L << 20)
            .withControlSocket(false).withSpillDirectory(dir);
        assertThrows(StoreAccessException.class, () -> DepotServer.start(config, m -> { }).close());
    }
}
