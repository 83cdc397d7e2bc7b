package dev.depot.bench;

import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The UNIX-domain-socket side of the baselines, served by the driver: {@link Mode#ECHO} answers every 16-byte
 * request with its 16 bytes, {@link Mode#DRAIN} reads and discards. One thread per connection; {@link #close}
 * closes the socket and every connection and removes the socket file.
 */
final class UnixSockets implements AutoCloseable {
    enum Mode { ECHO, DRAIN }

    static final int ECHO_LENGTH = 16;

    private final Path path;
    private final ServerSocketChannel server;
    private final List<SocketChannel> connections = new ArrayList<>();
    private final Thread acceptor;

    private UnixSockets(Path path, ServerSocketChannel server, Mode mode) {
        this.path = path;
        this.server = server;
        this.acceptor = Thread.ofPlatform().daemon().name("uds-accept").start(() -> acceptLoop(mode));
    }

    static UnixSockets serve(Path path, Mode mode) throws IOException {
        ServerSocketChannel s = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        s.bind(UnixDomainSocketAddress.of(path));
        return new UnixSockets(path, s, mode);
    }

    Path path() {
        return path;
    }

    private void acceptLoop(Mode mode) {
        while (server.isOpen()) {
            try {
                SocketChannel c = server.accept();
                synchronized (connections) {
                    connections.add(c);
                }
                Thread.ofPlatform().daemon().name("uds-conn").start(() -> serveOne(c, mode));
            } catch (IOException e) {
                return;
            }
        }
    }

    private static void serveOne(SocketChannel c, Mode mode) {
        ByteBuffer buf = ByteBuffer.allocateDirect(mode == Mode.ECHO ? ECHO_LENGTH : 256 * 1024);
        try (c) {
            while (true) {
                buf.clear();
                if (mode == Mode.ECHO) {
                    readFully(c, buf);
                    buf.flip();
                    writeFully(c, buf);
                } else if (c.read(buf) < 0) {
                    return;
                }
            }
        } catch (IOException e) {
            // the client closed its end
        }
    }

    static SocketChannel connect(Path path) throws IOException {
        return SocketChannel.open(UnixDomainSocketAddress.of(path));
    }

    static void readFully(SocketChannel c, ByteBuffer buf) throws IOException {
        while (buf.hasRemaining()) {
            if (c.read(buf) < 0) {
                throw new EOFException("peer closed the socket");
            }
        }
    }

    static void writeFully(SocketChannel c, ByteBuffer buf) throws IOException {
        while (buf.hasRemaining()) {
            c.write(buf);
        }
    }

    @Override
    public void close() {
        try {
            server.close();
            acceptor.join(1000);
            synchronized (connections) {
                for (SocketChannel c : connections) {
                    c.close();
                }
            }
            java.nio.file.Files.deleteIfExists(path);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
