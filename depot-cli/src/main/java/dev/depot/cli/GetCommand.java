package dev.depot.cli;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectView;
import dev.depot.errors.ObjectMissingException;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileSystemException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code depot get}: writes an object's data to a file or stdout, streamed from shared memory in chunks: to a
 * file straight from the mapping, to stdout through one small reusable buffer (never the whole object on the
 * heap). The object stays pinned while it is written.
 */
@Command(name = "get",
    customSynopsis = "depot get ID | --name NAME [--timeout MS] [-o FILE]",
    description = "write an object's data to stdout or a file",
    footer = {"Exit status 3 when the object does not exist, is not sealed within --timeout, or was spilled and its",
        "spill file is missing or damaged (the object is lost; the message says how); 4 when it is spilled and the",
        "store has no room to restore it within --timeout."})
final class GetCommand extends StoreCommand {
    /** Bytes written per call. */
    static final int CHUNK = 1 << 20;

    @Parameters(arity = "0..1", paramLabel = "ID", description = "the object's id, 40 hex digits")
    String hex;

    @Option(names = "--name", paramLabel = "NAME", description = "the object whose id derives from NAME (as put --name)")
    String name;

    @Option(names = "--timeout", paramLabel = "MS",
        description = "wait up to MS milliseconds for the object to be sealed (default 0: do not wait; -1: forever)")
    long timeout;

    @Option(names = {"-o", "--output"}, paramLabel = "FILE", description = "write to FILE instead of stdout (- is stdout)")
    String output;

    @Override
    int run() throws IOException {
        ObjectId id;
        if (name != null) {
            if (hex != null) {
                throw new UsageException("too many arguments: " + hex + " (expected no ID with --name)");
            }
            id = ObjectId.of(name);
        } else if (hex == null) {
            throw new UsageException("missing one object ID (or --name NAME)");
        } else {
            id = ObjectIds.parseHex(hex);
        }
        Path dir = dir();
        try (DepotClient depot = DepotClient.open(dir);
             ObjectView view = depot.tryGet(id, timeout)) {
            if (view == null) {
                throw new ObjectMissingException("object " + id + (timeout == 0 ? " does not exist"
                    : " was not sealed within " + timeout + " ms") + " in the store at " + dir
                    + "; list objects with `depot ls`" + (timeout == 0 ? " or wait for it with --timeout MS" : ""));
            }
            if (output == null || output.equals("-")) {
                writeTo(out(), view.data());
            } else {
                writeTo(Path.of(output), view.data());
            }
        }
        return 0;
    }

    private static void writeTo(PrintStream out, MemorySegment data) throws IOException {
        byte[] buffer = new byte[(int) Math.min(CHUNK, data.byteSize())];
        for (long offset = 0; offset < data.byteSize(); offset += buffer.length) {
            int n = (int) Math.min(buffer.length, data.byteSize() - offset);
            MemorySegment.copy(data, ValueLayout.JAVA_BYTE, offset, buffer, 0, n);
            out.write(buffer, 0, n);
        }
        out.flush();
        if (out.checkError()) {
            throw new IOException("writing to stdout failed (closed pipe or full disk?); the output is incomplete");
        }
    }

    private static void writeTo(Path file, MemorySegment data) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
            StandardOpenOption.TRUNCATE_EXISTING)) {
            for (long offset = 0; offset < data.byteSize(); offset += CHUNK) {
                ByteBuffer chunk = data.asSlice(offset, Math.min(CHUNK, data.byteSize() - offset)).asByteBuffer();
                while (chunk.hasRemaining()) {
                    ch.write(chunk);
                }
            }
        } catch (FileSystemException e) {
            throw e;
        } catch (IOException e) {
            throw new IOException("writing " + file + " failed: " + Main.describe(e) + "; check free disk space", e);
        }
    }
}
