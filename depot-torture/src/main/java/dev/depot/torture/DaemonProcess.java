package dev.depot.torture;

import dev.depot.server.DepotServer;
import dev.depot.server.ServerConfig;
import java.nio.file.Path;

/**
 * A daemon in its own process, for the daemon-kill mode: {@code DIR CAPACITY [CONTROL_SOCKET]}. Prints
 * {@code ready}.
 */
public final class DaemonProcess {
    private DaemonProcess() {
    }

    public static void main(String[] a) throws InterruptedException {
        DepotServer.start(ServerConfig.defaults().withDirectory(Path.of(a[0])).withCapacity(Long.parseLong(a[1]))
            .withControlSocket(a.length > 2 && Boolean.parseBoolean(a[2])), msg -> System.err.println("daemon: " + msg));
        System.out.println("ready");
        Thread.sleep(Long.MAX_VALUE);
    }
}
