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
import java.util.List;

/**
 * {@code depot get}: writes an object's data to a file or stdout, streamed from shared memory in chunks: to a
 * file straight from the mapping, to stdout through one small reusable buffer (never the whole object on the
 * heap). The object stays pinned while it is written.
 */
final class GetCommand implements Command {
    /** Bytes written per call. */
    static final int CHUNK = 1 << 20;

    @Override
    public String name() {
        return "get";
    }

    @Override
    public String synopsis() {
        return "ID | --name NAME [--timeout MS] [-o FILE]";
    }

    @Override
    public String summary() {
        return "write an object's data to stdout or a file";
    }

    @Override
    public String details() {
        return """
            Exit status 3 when the object does not exist, or is not sealed within --timeout.
            """;
    }

    @Override
    public List<Args.Option> options() {
        return List.of(
            new Args.Option("--name", null, "NAME", "the object whose id derives from NAME (as put --name)"),
            new Args.Option("--timeout", null, "MS",
                "wait up to MS milliseconds for the object to be sealed (default 0: do not wait; -1: forever)"),
            new Args.Option("--output", "-o", "FILE", "write to FILE instead of stdout (- is stdout)"));
    }

    @Override
    public int run(Context ctx) throws IOException {
        Args args = ctx.args();
        ObjectId id;
        if (args.has("--name")) {
            args.expectPositionals(0, 0, "no ID with --name");
            id = ObjectId.of(args.value("--name"));
        } else {
            args.expectPositionals(1, 1, "one object ID (or --name NAME)");
            id = ObjectIds.parseHex(args.positionals().getFirst());
        }
        long timeout = args.number("--timeout", 0);
        String output = args.value("--output");
        try (DepotClient depot = DepotClient.open(ctx.dir());
             ObjectView view = depot.tryGet(id, timeout)) {
            if (view == null) {
                throw new ObjectMissingException("object " + id + (timeout == 0 ? " does not exist"
                    : " was not sealed within " + timeout + " ms") + " in the store at " + ctx.dir()
                    + "; list objects with `depot ls`" + (timeout == 0 ? " or wait for it with --timeout MS" : ""));
            }
            if (output == null || output.equals("-")) {
                writeTo(ctx.out(), view.data());
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
