package dev.depot.server.spill;

import static dev.depot.server.spill.SpillFileDescriptor.*;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Set;

/**
 * Writes and reads spill files ({@link SpillFileDescriptor}) in one directory. Plain blocking file I/O on the
 * daemon's spiller thread, never under the allocator lock.
 */
final class SpillFiles {
    /** Largest piece copied between the heap and a file at once ({@code asByteBuffer} is int-sized). */
    private static final long CHUNK = 64L << 20;

    private final Path dir;

    SpillFiles(Path dir) throws IOException {
        SpillDirectory.createOrCheck(dir);
        this.dir = dir;
    }

    Path directory() {
        return dir;
    }

    Path path(byte[] id, int slot, int generation) {
        return dir.resolve(fileName(HexFormat.of().formatHex(id), slot, generation));
    }

    /** Bytes a spilled object takes on disk. */
    static long fileLength(long dataLength, int metadataLength) {
        return HEADER_LENGTH + dataLength + metadataLength;
    }

    /**
     * Writes {@code contents} (data then metadata) under a temporary name; {@link #publish} renames it to its
     * final name, which so only ever holds a whole file.
     */
    Path writeTemporary(byte[] id, int slot, int generation, long dataLength, int metadataLength,
                        MemorySegment contents) throws IOException {
        Path target = path(id, slot, generation);
        Path tmp = target.resolveSibling(target.getFileName() + TEMPORARY_SUFFIX);
        Files.deleteIfExists(tmp);  // a leftover of a failed write; CREATE_NEW makes the file 0600 afresh
        try (FileChannel ch = FileChannel.open(tmp, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
            LinkOption.NOFOLLOW_LINKS), SpillDirectory.FILE_PERMISSIONS)) {
            ByteBuffer h = ByteBuffer.allocate(HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
            h.putLong(MAGIC_OFFSET, MAGIC).putInt(VERSION_OFFSET, VERSION).putInt(HEADER_LENGTH_OFFSET, HEADER_LENGTH)
                .putLong(DATA_LENGTH_OFFSET, dataLength).putInt(METADATA_LENGTH_OFFSET, metadataLength)
                .putInt(GENERATION_OFFSET, generation).put(ID_OFFSET, id);
            writeFully(ch, h);
            for (long at = 0; at < contents.byteSize(); at += CHUNK) {
                writeFully(ch, contents.asSlice(at, Math.min(CHUNK, contents.byteSize() - at)).asByteBuffer());
            }
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(tmp);
            throw e;
        }
        return tmp;
    }

    /** Renames a complete temporary file to its final name (atomically). */
    void publish(Path tmp) throws IOException {
        String name = tmp.getFileName().toString();
        Path target = tmp.resolveSibling(name.substring(0, name.length() - TEMPORARY_SUFFIX.length()));
        Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /**
     * Reads the spill file of {@code (id, slot, generation)} into {@code target} (data then metadata), checking
     * its header against what the index says.
     */
    void read(byte[] id, int slot, int generation, long dataLength, int metadataLength, MemorySegment target)
        throws IOException {
        Path p = path(id, slot, generation);
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            ByteBuffer h = ByteBuffer.allocate(HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
            readFully(ch, h, 0, p);
            byte[] fileId = new byte[ID_LENGTH];
            h.get(ID_OFFSET, fileId);
            if (h.getLong(MAGIC_OFFSET) != MAGIC || h.getInt(VERSION_OFFSET) != VERSION
                || h.getLong(DATA_LENGTH_OFFSET) != dataLength || h.getInt(METADATA_LENGTH_OFFSET) != metadataLength
                || !Arrays.equals(fileId, id) || ch.size() != fileLength(dataLength, metadataLength)) {
                throw new IOException("spill file " + p + " does not hold the object its name says (" + ch.size()
                    + " bytes; expected " + fileLength(dataLength, metadataLength) + ")");
            }
            long position = HEADER_LENGTH;
            for (long at = 0; at < target.byteSize(); at += CHUNK) {
                ByteBuffer b = target.asSlice(at, Math.min(CHUNK, target.byteSize() - at)).asByteBuffer();
                readFully(ch, b, position, p);
                position += b.capacity();
            }
        }
    }

    void delete(byte[] id, int slot, int generation) throws IOException {
        Files.deleteIfExists(path(id, slot, generation));
    }

    private static void writeFully(FileChannel ch, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            ch.write(b);
        }
    }

    private static void readFully(FileChannel ch, ByteBuffer b, long position, Path p) throws IOException {
        long at = position;
        while (b.hasRemaining()) {
            int n = ch.read(b, at);
            if (n < 0) {
                throw new IOException("spill file " + p + " ends early at " + at);
            }
            at += n;
        }
    }
}
