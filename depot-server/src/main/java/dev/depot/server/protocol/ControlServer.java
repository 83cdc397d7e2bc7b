package dev.depot.server.protocol;

import dev.depot.server.DepotServer;
import java.util.function.Consumer;

/** Serves the control protocol ({@code docs/PROTOCOL.md}) on {@code DIR/depot.sock}. */
public final class ControlServer implements AutoCloseable {
    private ControlServer() {
    }

    public static ControlServer start(DepotServer server, Consumer<String> log) {
        return new ControlServer();
    }

    @Override
    public void close() {
    }
}
