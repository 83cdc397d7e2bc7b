package dev.depot.server.protocol;

import dev.depot.client.DepotClient;
import dev.depot.core.store.Store;
import dev.depot.core.store.StoreFile;
import dev.depot.core.store.StoreLayout;
import dev.depot.server.metrics.ProtocolCounters;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import jdk.net.ExtendedSocketOptions;
import jdk.net.UnixDomainPrincipal;

/**
 * Serves the control protocol ({@code docs/PROTOCOL.md}, {@link FrameDescriptor}, {@link MessageDescriptor}) on
 * {@code DIR/depot.sock}: clients that cannot map the store themselves with Java's client (Python, tools) ask
 * the daemon to create, get and release objects, and read and write the data in their own mapping of the store
 * file at the offsets it replies with.
 *
 * <p>One accept thread; one platform thread per connection, which owns the connection's writers and views and
 * releases them when the connection ends. Platform, not virtual: a virtual thread's socket read parks it and
 * a carrier must pick it up again for every request, which cost 100+ µs per round trip here; a platform
 * thread blocked in {@code read} is woken by the kernel directly. Connections are few (one per client
 * process), so their threads are cheap. Only processes of the daemon's own user are served (checked with
 * {@code SO_PEERCRED}); the socket file has mode 0600.
 *
 * <p>Lifecycle: {@link #start} binds (removing a stale socket file left by a dead daemon) and serves;
 * {@link #close} stops accepting, ends every connection, waits for their handlers to release what they held,
 * and removes the socket file.
 */
public final class ControlServer implements AutoCloseable {
    /** Name of the socket file in the store directory. */
    public static final String SOCKET_NAME = "depot.sock";
    private static final long JOIN_MILLIS = 5_000;

    private final Path socketPath;
    private final ServerSocketChannel serverChannel;
    private final Context context;
    private final SealWaiter waiter;
    private final Map<Connection, Thread> connections = new ConcurrentHashMap<>();
    private final AtomicLong connectionCount = new AtomicLong();
    private final Thread acceptor;
    private volatile boolean closing;

    private ControlServer(Store store, DepotClient client, ProtocolCounters counters, Consumer<String> log,
                          Path socketPath, ServerSocketChannel channel) throws IOException {
        this.socketPath = socketPath;
        this.serverChannel = channel;
        MemorySegment mapping = store.header();
        StoreLayout layout = store.layout();
        UserPrincipal owner = Files.getOwner(socketPath);
        this.waiter = new SealWaiter();
        Path storeFile = StoreFile.fileIn(store.directory()).toAbsolutePath();
        this.context = new Context(store, client, mapping, storeFile, fileKey(storeFile, "unix:dev"),
            fileKey(storeFile, "unix:ino"), layout, (int) ProcessHandle.current().pid(), owner, waiter, counters, log,
            () -> closing);
        this.acceptor = Thread.ofPlatform().daemon().name("depot-control-accept").start(this::acceptLoop);
    }

    /** One field of a file's identity ({@code unix:dev}, {@code unix:ino}), not following links. */
    private static long fileKey(Path file, String attribute) throws IOException {
        return ((Number) Files.getAttribute(file, attribute, LinkOption.NOFOLLOW_LINKS)).longValue();
    }

    /** The socket path of the store in {@code dir}. */
    public static Path socketIn(Path dir) {
        return dir.resolve(SOCKET_NAME);
    }

    /**
     * Binds {@code DIR/depot.sock} and serves it. The caller is the store's daemon (it has claimed the role), so
     * a socket file found there was left by a dead daemon and is removed.
     *
     * @param store    the daemon's store: connections open their sessions on it
     * @param client   the daemon's own client of it, for requests that leave nothing held
     * @param counters where what is served is counted
     */
    public static ControlServer start(Store store, DepotClient client, ProtocolCounters counters, Consumer<String> log) {
        Path socket = socketIn(store.directory());
        // Bound under a temporary name, made 0600, then renamed into place: no client ever sees a socket with
        // wider permissions.
        Path bound = store.directory().resolve(SOCKET_NAME + ".tmp-" + ProcessHandle.current().pid());
        ServerSocketChannel channel = null;
        try {
            Files.deleteIfExists(bound);
            channel = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
            channel.bind(UnixDomainSocketAddress.of(bound));
            Files.setPosixFilePermissions(bound, PosixFilePermissions.fromString("rw-------"));
            Files.move(bound, socket, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            return new ControlServer(store, client, counters, log, socket, channel);
        } catch (IOException e) {
            closeQuietly(channel);
            try {
                Files.deleteIfExists(bound);
            } catch (IOException ignored) {
                // reported below
            }
            throw new UncheckedIOException("cannot serve the control socket " + socket + ": " + e.getMessage(), e);
        }
    }

    public Path socketPath() {
        return socketPath;
    }

    private void acceptLoop() {
        while (!closing) {
            SocketChannel ch;
            try {
                ch = serverChannel.accept();
            } catch (ClosedChannelException e) {
                return;
            } catch (IOException e) {
                if (!closing) {
                    context.log().accept("control socket: accept failed: " + e.getMessage());
                }
                continue;
            }
            String name = "connection " + connectionCount.incrementAndGet();
            Connection c = new Connection(context, ch, name);
            Thread t = Thread.ofPlatform().daemon().name("depot-" + name.replace(' ', '-')).unstarted(() -> {
                try {
                    c.run();
                } finally {
                    connections.remove(c);
                }
            });
            connections.put(c, t);
            if (closing) {
                c.shutdown();
            }
            t.start();
        }
    }

    /** Connections accepted since the server started. */
    public long acceptedCount() {
        return connectionCount.get();
    }

    /** Connections being served now. */
    public int connectionCount() {
        return connections.size();
    }

    @Override
    public void close() {
        if (closing) {
            return;
        }
        closing = true;
        closeQuietly(serverChannel);
        try {
            acceptor.join(JOIN_MILLIS);
            for (Connection c : connections.keySet()) {
                c.shutdown();
            }
            for (Thread t : connections.values()) {
                t.join(JOIN_MILLIS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        waiter.close();
        try {
            Files.deleteIfExists(socketPath);
        } catch (IOException e) {
            context.log().accept("cannot remove " + socketPath + ": " + e.getMessage());
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (Exception ignored) {
            // nothing left to do
        }
    }

    /** What every connection needs from the server. */
    record Context(Store store, DepotClient client, MemorySegment mapping, Path storeFile, long storeDevice,
                   long storeInode, StoreLayout layout, int daemonPid,
                   UserPrincipal owner, SealWaiter waiter, ProtocolCounters counters, Consumer<String> log,
                   java.util.function.BooleanSupplier closingFlag) {
        boolean closing() {
            return closingFlag.getAsBoolean();
        }

        long fileLength() {
            return layout.fileLength();
        }

        long heapOffset() {
            return layout.heapOffset();
        }

        long heapLength() {
            return layout.heapLength();
        }

        /** Offset in the store file of a segment of the daemon's mapping. */
        long fileOffsetOf(MemorySegment s) {
            long offset = s.address() - mapping.address();
            if (offset < 0 || offset + s.byteSize() > layout.fileLength()) {
                throw new IllegalStateException("segment at " + s.address() + " of " + s.byteSize()
                    + " bytes lies outside the store mapping at " + mapping.address() + " of " + layout.fileLength());
            }
            return offset;
        }

        /** Null when the peer may be served, else why not. */
        String checkPeer(SocketChannel ch) throws IOException {
            UnixDomainPrincipal peer = ch.getOption(ExtendedSocketOptions.SO_PEERCRED);
            if (peer.user().equals(owner) || peer.user().getName().equals(owner.getName())) {
                return null;
            }
            return "refused a client of user " + peer.user().getName() + "; this daemon serves only user "
                + owner.getName();
        }
    }
}
