package dev.depot.cli;

import dev.depot.client.DepotClient;
import dev.depot.client.DepotClient.CreateOption;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectWriter;
import dev.depot.errors.DepotException;
import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code depot put}: stores a file or stdin as one sealed object and prints its id. A regular file is read
 * straight into the object's shared memory (its size is known up front); stdin and other streams are buffered
 * on the heap first, since an object's size is fixed when it is created.
 */
final class PutCommand implements Command {
    /** Bytes read per call, from a file into shared memory or from a stream into the heap buffer. */
    static final int CHUNK = 1 << 20;

    @Override
    public String name() {
        return "put";
    }

    @Override
    public String synopsis() {
        return "[--id HEX | --name NAME] [--meta TEXT] [--no-evict] [FILE|-]";
    }

    @Override
    public String summary() {
        return "store FILE (or stdin) as one object and print its id";
    }

    @Override
    public String details() {
        return """
            Without --id or --name the id is random. Reads stdin when FILE is - or missing.
            Prints the object's id (40 hex digits) on stdout.
            Exit status 4 when the object does not fit (even after eviction, or with --no-evict);
            1 when the id exists already (ids are write-once: `depot rm` it first).
            """;
    }

    @Override
    public List<Args.Option> options() {
        return List.of(
            new Args.Option("--id", null, "HEX", "object id, 40 hex digits (default: random)"),
            new Args.Option("--name", null, "NAME", "derive the id from NAME (first 20 bytes of its SHA-256)"),
            new Args.Option("--meta", null, "TEXT", "metadata stored with the object (UTF-8)"),
            new Args.Option("--no-evict", null, null, "fail (exit 4) instead of evicting old objects when full"));
    }

    @Override
    public int run(Context ctx) throws IOException {
        Args args = ctx.args();
        args.expectPositionals(0, 1, "at most one FILE (or - for stdin)");
        if (args.has("--id") && args.has("--name")) {
            throw new Args.UsageException("give --id or --name, not both");
        }
        ObjectId id = args.has("--id") ? ObjectIds.parseHex(args.value("--id"))
            : args.has("--name") ? ObjectId.of(args.value("--name")) : ObjectId.random();
        String meta = args.value("--meta");
        byte[] metadata = meta == null ? new byte[0] : meta.getBytes(StandardCharsets.UTF_8);
        CreateOption[] options = args.has("--no-evict") ? new CreateOption[] {CreateOption.NO_EVICT}
            : new CreateOption[0];
        String file = args.positionals().isEmpty() ? "-" : args.positionals().getFirst();
        try (DepotClient depot = DepotClient.open(ctx.dir())) {
            if (file.equals("-")) {
                putStream(depot, id, metadata, options, ctx.in());
            } else {
                Path path = Path.of(file);
                if (Files.isDirectory(path)) {
                    throw new DepotException(path + " is a directory; `depot put` stores one file (or stdin, -) as"
                        + " one object: put each file of it separately");
                }
                if (Files.isRegularFile(path)) {
                    putFile(depot, id, metadata, options, path);
                } else {
                    try (InputStream in = Files.newInputStream(path)) {
                        putStream(depot, id, metadata, options, in);
                    }
                }
            }
        }
        ctx.out().println(id.toHex());
        return 0;
    }

    /** Reads the file straight into the object's shared memory, chunk by chunk. */
    private static void putFile(DepotClient depot, ObjectId id, byte[] metadata, CreateOption[] options, Path path)
        throws IOException {
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
            long size = ch.size();
            try (ObjectWriter w = depot.create(id, size, metadata, options)) {
                MemorySegment data = w.data();
                long offset = 0;
                while (offset < size) {
                    ByteBuffer chunk = data.asSlice(offset, Math.min(CHUNK, size - offset)).asByteBuffer();
                    while (chunk.hasRemaining()) {
                        if (ch.read(chunk, offset + chunk.position()) < 0) {
                            throw new IOException(path + " shrank from " + size + " to " + (offset + chunk.position())
                                + " bytes while it was read; the object was not stored, try again");
                        }
                    }
                    offset += chunk.capacity();
                }
                w.seal();
            }
        }
    }

    /** Buffers the stream on the heap (its size is unknown), then creates the object and copies it in. */
    private static void putStream(DepotClient depot, ObjectId id, byte[] metadata, CreateOption[] options,
                                  InputStream in) throws IOException {
        List<byte[]> chunks = new ArrayList<>();
        long size = 0;
        try {
            while (true) {
                byte[] chunk = in.readNBytes(CHUNK);
                if (chunk.length == 0) {
                    break;
                }
                chunks.add(chunk);
                size += chunk.length;
            }
        } catch (OutOfMemoryError e) {
            chunks.clear();
            throw new DepotException("the input is too large to buffer on this JVM's heap (read " + Size.format(size)
                + " so far); put a regular file instead (it is read straight into shared memory), or raise the heap"
                + " with DEPOT_JAVA_OPTS=-Xmx...", e);
        }
        try (ObjectWriter w = depot.create(id, size, metadata, options)) {
            MemorySegment data = w.data();
            long offset = 0;
            for (byte[] chunk : chunks) {
                MemorySegment.copy(MemorySegment.ofArray(chunk), 0, data, offset, chunk.length);
                offset += chunk.length;
            }
            w.seal();
        }
    }
}
