package dev.depot.cli;

import dev.depot.client.DepotClient.CreateOption;
import dev.depot.client.DepotClient;
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
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code depot put}: stores a file or stdin as one sealed object and prints its id. A regular file is read
 * straight into the object's shared memory (its size is known up front); stdin and other streams are buffered
 * on the heap first, since an object's size is fixed when it is created.
 */
@Command(name = "put",
    customSynopsis = "depot put [--id HEX | --name NAME] [--meta TEXT] [--no-evict] [--keep] [FILE|-]",
    description = "store FILE (or stdin) as one object and print its id",
    footer = {"Without --id or --name the id is random. Reads stdin when FILE is - or missing.",
        "Prints the object's id (40 hex digits) on stdout.",
        "Exit status 4 when the object does not fit (even after eviction, or with --no-evict);",
        "1 when the id exists already (ids are write-once: `depot rm` it first).",
        "--keep: the object is never evicted; a daemon with --spill-dir writes it to disk when room is needed",
        "and a get reads it back."})
final class PutCommand extends StoreCommand {
    /** Bytes read per call, from a file into shared memory or from a stream into the heap buffer. */
    static final int CHUNK = 1 << 20;

    @Parameters(arity = "0..1", paramLabel = "FILE", description = "the file to store; - or none: stdin")
    String file = "-";

    @Option(names = "--id", paramLabel = "HEX", description = "object id, 40 hex digits (default: random)")
    String hex;

    @Option(names = "--name", paramLabel = "NAME", description = "derive the id from NAME (first 20 bytes of its SHA-256)")
    String name;

    @Option(names = "--meta", paramLabel = "TEXT", description = "metadata stored with the object (UTF-8)")
    String meta;

    @Option(names = "--no-evict", description = "fail (exit 4) instead of evicting old objects when full")
    boolean noEvict;

    @Option(names = "--keep", description = "never evict the object (spilled to disk instead, with serve --spill-dir)")
    boolean keep;

    @Override
    int run() throws IOException {
        if (hex != null && name != null) {
            throw new UsageException("give --id or --name, not both");
        }
        ObjectId id = hex != null ? ObjectIds.parseHex(hex) : name != null ? ObjectId.of(name) : ObjectId.random();
        byte[] metadata = meta == null ? new byte[0] : meta.getBytes(StandardCharsets.UTF_8);
        java.util.List<CreateOption> chosen = new java.util.ArrayList<>();
        if (noEvict) {
            chosen.add(CreateOption.NO_EVICT);
        }
        if (keep) {
            chosen.add(CreateOption.KEEP);
        }
        CreateOption[] options = chosen.toArray(CreateOption[]::new);
        try (DepotClient depot = DepotClient.open(dir())) {
            if (file.equals("-")) {
                putStream(depot, id, metadata, options, in());
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
        out().println(id.toHex());
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
