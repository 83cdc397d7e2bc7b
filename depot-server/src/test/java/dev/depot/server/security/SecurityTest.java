package dev.depot.server.security;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.depot.client.testing.TempStore;
import dev.depot.core.store.StoreFile;
import dev.depot.server.DepotServer;
import dev.depot.server.ServerConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Another user can neither read the store files nor use the daemon. The cross-user cases run as root, switching
 * to {@code nobody} with {@code setpriv}; elsewhere they are skipped with a message.
 */
class SecurityTest {
    private TempStore temp;
    private DepotServer server;

    @BeforeEach
    void setUp() {
        temp = new TempStore();
        server = DepotServer.start(ServerConfig.defaults().withDirectory(temp.dir()).withCapacity(1 << 20), msg -> { });
    }

    @AfterEach
    void tearDown() {
        try {
            server.close();
        } finally {
            temp.close();
        }
    }

    @Test
    void shouldKeepStoreFilesPrivateToTheOwner() throws IOException {
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(temp.dir())));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(StoreFile.fileIn(temp.dir()))));
        Path socket = temp.dir().resolve("depot.sock");
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(socket)));
    }

    @Test
    void shouldDenyAnotherUserTheStoreFile() throws Exception {
        assumeAsRootWithSetpriv();
        // Even with the directory opened up, the file itself is 0600.
        Files.setPosixFilePermissions(temp.dir(), PosixFilePermissions.fromString("rwx--x--x"));
        Result r = asNobody("cat", StoreFile.fileIn(temp.dir()).toString());
        assertNotEquals(0, r.status);
        assertTrue(r.err.contains("Permission denied"), r.err);
    }

    @Test
    void shouldRefuseAnotherUserOnTheControlSocket() throws Exception {
        assumeAsRootWithSetpriv();
        Path socket = temp.dir().resolve("depot.sock");
        // Open the way to the socket, so that only the daemon's SO_PEERCRED check stands between nobody and it.
        Files.setPosixFilePermissions(temp.dir(), PosixFilePermissions.fromString("rwx--x--x"));
        Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-rw-rw-"));
        String script = "import socket,sys\n"
            + "s=socket.socket(socket.AF_UNIX); s.settimeout(10); s.connect(sys.argv[1])\n"
            + "data=b''\n"
            + "while True:\n"
            + "    b=s.recv(4096)\n"
            + "    if not b: break\n"
            + "    data+=b\n"
            + "sys.stdout.write(data.decode('utf-8','replace'))\n";
        Result r = asNobody("/usr/bin/python3", "-c", script, socket.toString());
        assertEquals(0, r.status, r.err);
        assertTrue(r.out.contains("refused a client of user nobody"), r.out);
    }

    private static void assumeAsRootWithSetpriv() {
        assumeTrue("root".equals(System.getProperty("user.name")), "cross-user tests need root (to switch to nobody)");
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/setpriv")), "cross-user tests need /usr/bin/setpriv");
    }

    private record Result(int status, String out, String err) {
    }

    private static Result asNobody(String... command) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("/usr/bin/setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"));
        cmd.addAll(List.of(command));
        Process p = new ProcessBuilder(cmd).start();
        try {
            if (!p.waitFor(20, TimeUnit.SECONDS)) {
                fail("command as nobody did not finish: " + cmd);
            }
            return new Result(p.exitValue(), new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8),
                new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
        } finally {
            p.destroyForcibly();
            p.waitFor();
        }
    }
}
