package dev.depot.server.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.depot.client.DepotClient;
import dev.depot.client.testing.TempStore;
import dev.depot.core.store.StoreFile;
import dev.depot.errors.StoreAccessException;
import dev.depot.server.DepotServer;
import dev.depot.server.ServerConfig;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Another user ({@code nobody}, via {@code setpriv}) makes the store directory first, mode 0777, and leaves a
 * store file of mode 0666 in it: the daemon and the Java client refuse both, naming the owner and the mode,
 * instead of storing objects the squatter can read and rewrite. Needs root; skipped elsewhere.
 */
class SquattedStoreTest {
    private static void asNobody(String... command) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("/usr/bin/setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"));
        cmd.addAll(List.of(command));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        try {
            assertTrue(p.waitFor(20, TimeUnit.SECONDS), "command as nobody did not finish: " + cmd);
            assertEquals(0, p.exitValue(), () -> cmd + ": " + new String(readAll(p), StandardCharsets.UTF_8));
        } finally {
            p.destroyForcibly();
            p.waitFor();
        }
    }

    private static byte[] readAll(Process p) {
        try {
            return p.getInputStream().readAllBytes();
        } catch (java.io.IOException e) {
            return new byte[0];
        }
    }

    private static void assumeAsRootWithSetpriv() {
        assumeTrue("root".equals(System.getProperty("user.name")), "cross-user tests need root (to switch to nobody)");
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/setpriv")), "cross-user tests need /usr/bin/setpriv");
    }

    private static ServerConfig config(Path dir) {
        return ServerConfig.defaults().withDirectory(dir).withCapacity(1 << 20).withControlSocket(false);
    }

    @Test
    void shouldRefuseADirectoryAndStoreFileSquattedByAnotherUser() throws Exception {
        assumeAsRootWithSetpriv();
        try (TempStore squatted = new TempStore(); TempStore template = new TempStore()) {
            // A valid store file for the squatter to copy: made by us, then opened up so that nobody can read it.
            DepotServer.start(config(template.dir()), msg -> { }).close();
            Files.setPosixFilePermissions(template.dir(), PosixFilePermissions.fromString("rwx--x--x"));
            Files.setPosixFilePermissions(StoreFile.fileIn(template.dir()), PosixFilePermissions.fromString("rw-r--r--"));
            asNobody("mkdir", "-m", "777", squatted.dir().toString());
            var e = assertThrows(StoreAccessException.class, () -> DepotServer.start(config(squatted.dir()), msg -> { }));
            assertTrue(e.getMessage().startsWith("the store directory " + squatted.dir() + " belongs to nobody"),
                e.getMessage());
            assertTrue(e.getMessage().contains("mode 0777"), e.getMessage());
            assertTrue(Files.notExists(StoreFile.fileIn(squatted.dir())), "nothing was created in it");

            asNobody("cp", StoreFile.fileIn(template.dir()).toString(), StoreFile.fileIn(squatted.dir()).toString());
            asNobody("chmod", "666", StoreFile.fileIn(squatted.dir()).toString());
            var daemon = assertThrows(StoreAccessException.class, () -> DepotServer.start(config(squatted.dir()), msg -> { }));
            assertTrue(daemon.getMessage().contains("belongs to nobody"), daemon.getMessage());
            var client = assertThrows(StoreAccessException.class, () -> DepotClient.open(squatted.dir()));
            assertTrue(client.getMessage().contains("belongs to nobody"), client.getMessage());

            // Even with the directory taken back, the squatter's file (and its mode) is refused.
            asNobody("chmod", "777", squatted.dir().toString());
            Files.setOwner(squatted.dir(), template.dir().getFileSystem().getUserPrincipalLookupService()
                .lookupPrincipalByName("root"));
            Files.setPosixFilePermissions(squatted.dir(), PosixFilePermissions.fromString("rwx------"));
            var file = assertThrows(StoreAccessException.class, () -> DepotClient.open(squatted.dir()));
            assertTrue(file.getMessage().startsWith("the store file " + StoreFile.fileIn(squatted.dir())
                + " belongs to nobody"), file.getMessage());
            assertTrue(file.getMessage().contains("mode 0666"), file.getMessage());
        }
    }
}
