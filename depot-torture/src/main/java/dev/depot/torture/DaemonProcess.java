package dev.depot.torture;

import dev.depot.server.DepotServer;
import dev.depot.server.ServerConfig;
import java.nio.file.Path;

/** A daemon in its own process, for the daemon-kill mode: {@code DIR CAPACITY}. Prints {@code ready}. */
public final class DaemonProcess {
    private DaemonProcess() {
    }

    public static void main(String[] a) throws InterruptedException {
        DepotServer.start(ServerConfig.defaults().withDirectory(Path.of(a[0])).withCapacity(Long.parseLong(a[1]))
            .withControlSocket(false), msg -> System.err.println("daemon: " + msg));
        System.out.println("ready");
        Thread.sleep(Long.MAX_VALUE);
    }
}
