package dev.depot.torture;

import static dev.depot.server.protocol.FrameDescriptor.*;

import dev.depot.client.StoreStats;
import dev.depot.core.store.ScratchDirectory;
import dev.depot.server.DepotServer;
import dev.depot.server.ServerConfig;
import java.io.IOException;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Fuzzes a live daemon's control socket: each connection sends a mix of well-formed requests and mutated
 * ones (bit flips, wrong lengths, random types, truncations, garbage, oversized frames, other protocol
 * versions), then hangs up at a random point. Every few connections a well-formed client must still be
 * answered; at the end every pin and unsealed object the fuzz connections held must be gone.
 *
 * <pre>  scripts/fuzz --minutes 10        (CI runs a short version)</pre>
 */
public final class ProtocolFuzzer {
    /** What a run did and found. */
    public record Result(long connections, long frames, long healthChecks, List<String> problems) {
        public boolean ok() {
            return problems.isEmpty();
        }
    }

    private final SplittableRandom rnd;
    private final Path socket;
    private long frames;

    private ProtocolFuzzer(Path socket, long seed) {
        this.socket = socket;
        this.rnd = new SplittableRandom(seed);
    }

    public static void main(String[] args) throws Exception {
        long seconds = 60;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--minutes" -> seconds = Long.parseLong(args[++i]) * 60;
                case "--seconds" -> seconds = Long.parseLong(args[++i]);
                default -> {
                    System.err.println("usage: fuzz [--minutes M | --seconds S]");
                    System.exit(2);
                }
            }
        }
        Result r = run(seconds, System.nanoTime());
        r.problems().forEach(p -> System.out.println("PROBLEM " + p));
        System.out.println("{\"connections\":" + r.connections() + ",\"frames\":" + r.frames() + ",\"health_checks\":"
            + r.healthChecks() + ",\"problems\":" + r.problems().size() + ",\"ok\":" + r.ok() + "}");
        System.exit(r.ok() ? 0 : 1);
    }

    /** Fuzzes a fresh daemon for {@code seconds}; its store is removed before returning. */
    public static Result run(long seconds, long seed) throws Exception {
        ScratchDirectory scratch = new ScratchDirectory("depot-fuzz");
        Path dir = scratch.path();
        List<String> problems = new ArrayList<>();
        long connections = 0;
        long checks = 0;
        ProtocolFuzzer fuzzer;
        try (DepotServer server = DepotServer.start(ServerConfig.defaults().withDirectory(dir).withCapacity(16L << 20),
            msg -> { })) {
            fuzzer = new ProtocolFuzzer(dir.resolve("depot.sock"), seed);
            long end = System.nanoTime() + seconds * 1_000_000_000L;
            while (System.nanoTime() < end && problems.isEmpty()) {
                fuzzer.oneConnection();
                if (++connections % 20 == 0) {
                    checks++;
                    String bad = fuzzer.healthCheck();
                    if (bad != null) {
                        problems.add("after " + connections + " connections: " + bad);
                    }
                }
            }
            checks++;
            String bad = fuzzer.healthCheck();
            if (bad != null) {
                problems.add("at the end: " + bad);
            }
            // Connections are gone: the daemon must have aborted their unsealed objects and released their pins.
            long deadline = System.nanoTime() + 10_000_000_000L;
            StoreStats s = server.client().stats();
            while ((s.pinnedBytes() != 0 || s.unsealedBytes() != 0) && System.nanoTime() < deadline) {
                Thread.sleep(20);
                s = server.client().stats();
            }
            if (s.pinnedBytes() != 0 || s.unsealedBytes() != 0) {
                problems.add("leak after every fuzz connection closed: pinned " + s.pinnedBytes() + " bytes, unsealed "
                    + s.unsealedBytes() + " bytes");
            }
        } finally {
            scratch.close();
        }
        return new Result(connections, fuzzer.frames, checks, problems);
    }

    private void oneConnection() {
        try (SocketChannel ch = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
            ch.configureBlocking(false);
            int hello = rnd.nextInt(10);
            if (hello < 7) {
                send(ch, hello(VERSION_MAJOR));
            } else if (hello == 7) {
                send(ch, hello(VERSION_MAJOR + 1 + rnd.nextInt(100)));
            }
            int n = 1 + rnd.nextInt(30);
            for (int i = 0; i < n; i++) {
                byte[] frame = validRequest();
                if (rnd.nextBoolean()) {
                    frame = mutate(frame);
                }
                if (!send(ch, frame)) {
                    return;
                }
                drain(ch);
            }
        } catch (IOException e) {
            // the daemon closed the connection: fine, it is allowed to
        }
    }

    /** Writes the whole frame; false when the daemon has closed the connection. */
    private boolean send(SocketChannel ch, byte[] frame) throws IOException {
        frames++;
        ByteBuffer b = ByteBuffer.wrap(frame);
        long deadline = System.nanoTime() + 2_000_000_000L;
        while (b.hasRemaining()) {
            if (ch.write(b) == 0) {
                drain(ch);
                if (System.nanoTime() > deadline) {
                    return false;
                }
                Thread.onSpinWait();
            }
        }
        return true;
    }

    private static void drain(SocketChannel ch) throws IOException {
        ByteBuffer sink = ByteBuffer.allocate(64 * 1024);
        while (ch.read(sink) > 0) {
            sink.clear();
        }
    }

    private byte[] validRequest() {
        return switch (rnd.nextInt(9)) {
            case 0 -> frame(TYPE_CREATE, id(), le(rnd.nextInt(2)), le8(rnd.nextInt(4096)), le(0));
            case 1 -> frame(TYPE_SEAL, id());
            case 2 -> frame(TYPE_ABORT, id());
            case 3 -> frame(TYPE_GET, id(), le(0), le8(rnd.nextInt(3) - 1 == 1 ? 5 : 0));
            case 4 -> frame(TYPE_RELEASE, id());
            case 5 -> frame(TYPE_DELETE, id());
            case 6 -> frame(TYPE_LIST);
            case 7 -> frame(TYPE_STAT);
            default -> frame(TYPE_EVICT, le8(rnd.nextInt(1 << 16)));
        };
    }

    /** Ids from a small pool, so that creates, gets, seals and releases of one connection meet. */
    private byte[] id() {
        byte[] id = new byte[20];
        id[0] = (byte) rnd.nextInt(8);
        return id;
    }

    private byte[] mutate(byte[] f) {
        byte[] m = f.clone();
        switch (rnd.nextInt(7)) {
            case 0 -> {
                for (int i = 1 + rnd.nextInt(8); i > 0; i--) {
                    m[rnd.nextInt(m.length)] ^= (byte) (1 << rnd.nextInt(8));
                }
            }
            case 1 -> ByteBuffer.wrap(m).order(ByteOrder.LITTLE_ENDIAN).putInt(LENGTH_OFFSET,
                rnd.nextInt(5) == 0 ? rnd.nextInt() : rnd.nextInt(MIN_LENGTH + 64));
            case 2 -> ByteBuffer.wrap(m).order(ByteOrder.LITTLE_ENDIAN).putShort(TYPE_OFFSET, (short) rnd.nextInt(1 << 16));
            case 3 -> m = java.util.Arrays.copyOf(m, rnd.nextInt(m.length));
            case 4 -> {
                m = new byte[rnd.nextInt(256)];
                rnd.nextBytes(m);
            }
            case 5 -> ByteBuffer.wrap(m).order(ByteOrder.LITTLE_ENDIAN).putInt(LENGTH_OFFSET, MAX_LENGTH + 1 + rnd.nextInt(1000));
            default -> {
                byte[] longer = java.util.Arrays.copyOf(m, m.length + 1 + rnd.nextInt(64));
                ByteBuffer.wrap(longer).order(ByteOrder.LITTLE_ENDIAN).putInt(LENGTH_OFFSET, longer.length - Integer.BYTES);
                m = longer;
            }
        }
        return m;
    }

    /** A fresh connection says HELLO and asks STAT; null when both are answered properly. */
    String healthCheck() {
        try (SocketChannel ch = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
            ch.write(ByteBuffer.wrap(hello(VERSION_MAJOR)));
            int type = readReplyType(ch);
            if (type != (TYPE_HELLO | REPLY_BIT)) {
                return "HELLO answered with type 0x" + Integer.toHexString(type);
            }
            ch.write(ByteBuffer.wrap(frame(TYPE_STAT)));
            type = readReplyType(ch);
            return type == (TYPE_STAT | REPLY_BIT) ? null : "STAT answered with type 0x" + Integer.toHexString(type);
        } catch (IOException e) {
            return "a well-formed client was not served: " + e;
        }
    }

    private static int readReplyType(SocketChannel ch) throws IOException {
        ByteBuffer header = ByteBuffer.allocate(HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        readFully(ch, header);
        int length = header.getInt(LENGTH_OFFSET);
        if (length < MIN_LENGTH || length > MAX_LENGTH) {
            throw new IOException("reply length " + length + " out of range");
        }
        readFully(ch, ByteBuffer.allocate(length - MIN_LENGTH));
        return header.getShort(TYPE_OFFSET) & 0xffff;
    }

    private static void readFully(SocketChannel ch, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            if (ch.read(b) < 0) {
                throw new IOException("connection closed by the daemon");
            }
        }
    }

    private byte[] hello(int major) {
        return frame(TYPE_HELLO, le2(major), le2(VERSION_MINOR), le((int) ProcessHandle.current().pid()));
    }

    private static byte[] frame(int type, byte[]... parts) {
        int body = 0;
        for (byte[] p : parts) {
            body += p.length;
        }
        ByteBuffer b = ByteBuffer.allocate(HEADER_LENGTH + body).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(MIN_LENGTH + body).putShort((short) type).putShort((short) 0).putLong(1);
        for (byte[] p : parts) {
            b.put(p);
        }
        return b.array();
    }

    private static byte[] le2(int v) {
        return ByteBuffer.allocate(2).order(ByteOrder.LITTLE_ENDIAN).putShort((short) v).array();
    }

    private static byte[] le(int v) {
        return ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(v).array();
    }

    private static byte[] le8(long v) {
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v).array();
    }
}
