package dev.depot.server.spill;

import static dev.depot.server.spill.SpillFileDescriptor.*;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Set;
import java.util.zip.CRC32C;

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
     * Writes {@code contents} (data then metadata) under a temporary name, the checksum computed as it goes and
     * the header written last; {@link #publish} renames it to its final name, which so only ever holds a whole
     * file.
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
            CRC32C crc = new CRC32C();
            crc.update(h.array(), 0, CHECKSUM_OFFSET);
            long position = HEADER_LENGTH;
            for (long at = 0; at < contents.byteSize(); at += CHUNK) {
                ByteBuffer b = contents.asSlice(at, Math.min(CHUNK, contents.byteSize() - at)).asByteBuffer();
                crc.update(b.duplicate());
                position += writeFully(ch, b, position);
            }
            h.putInt(CHECKSUM_OFFSET, (int) crc.getValue());
            writeFully(ch, h, 0);
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
     * its header against what the index says and its checksum against what was read. {@code target} holds
     * unverified bytes when this throws.
     *
     * @throws DamagedException when the file is missing, or is not the object's whole, intact file
     * @throws IOException when reading fails
     */
    void read(byte[] id, int slot, int generation, long dataLength, int metadataLength, MemorySegment target)
        throws IOException {
        Path p = path(id, slot, generation);
        FileChannel ch;
        try {
            ch = FileChannel.open(p, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            throw new DamagedException(p, "it is missing");
        }
        try (ch) {
            long expected = fileLength(dataLength, metadataLength);
            long size = ch.size();
            if (size < HEADER_LENGTH) {
                throw new DamagedException(p, "it is " + size + " bytes long, shorter than its " + HEADER_LENGTH
                    + "-byte header (expected " + expected + " bytes)");
            }
            ByteBuffer h = ByteBuffer.allocate(HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
            readFully(ch, h, 0, p);
            checkHeader(p, h, id, generation, dataLength, metadataLength);
            if (size != expected) {
                throw new DamagedException(p, "it is " + size + " bytes long; its header and the index say " + expected
                    + " (" + (size < expected ? "truncated" : "extended") + ")");
            }
            CRC32C crc = new CRC32C();
            crc.update(h.array(), 0, CHECKSUM_OFFSET);
            long position = HEADER_LENGTH;
            for (long at = 0; at < target.byteSize(); at += CHUNK) {
                ByteBuffer b = target.asSlice(at, Math.min(CHUNK, target.byteSize() - at)).asByteBuffer();
                readFully(ch, b, position, p);
                crc.update(b.flip());
                position += b.capacity();
            }
            int stored = h.getInt(CHECKSUM_OFFSET);
            if ((int) crc.getValue() != stored) {
                throw new DamagedException(p, "its CRC32C is 0x" + Integer.toHexString((int) crc.getValue())
                    + " but its header says 0x" + Integer.toHexString(stored) + " (" + target.byteSize()
                    + " bytes of data and metadata)");
            }
        }
    }

    private static void checkHeader(Path p, ByteBuffer h, byte[] id, int generation, long dataLength,
                                    int metadataLength) throws DamagedException {
        long magic = h.getLong(MAGIC_OFFSET);
        if (magic != MAGIC) {
            throw new DamagedException(p, "it is not a spill file (magic 0x" + Long.toHexString(magic) + ", expected 0x"
                + Long.toHexString(MAGIC) + ")");
        }
        int version = h.getInt(VERSION_OFFSET);
        if (version != VERSION || h.getInt(HEADER_LENGTH_OFFSET) != HEADER_LENGTH) {
            throw new DamagedException(p, "it has format version " + version + " and a " + h.getInt(HEADER_LENGTH_OFFSET)
                + "-byte header; this daemon reads version " + VERSION + " (" + HEADER_LENGTH + " bytes)");
        }
        byte[] fileId = new byte[ID_LENGTH];
        h.get(ID_OFFSET, fileId);
        if (!Arrays.equals(fileId, id)) {
            throw new DamagedException(p, "it holds object " + HexFormat.of().formatHex(fileId)
                + ", not this one (swapped or renamed)");
        }
        if (h.getInt(GENERATION_OFFSET) != generation) {
            throw new DamagedException(p, "it was written for generation " + Integer.toUnsignedString(
                h.getInt(GENERATION_OFFSET)) + " of its index slot, not " + Integer.toUnsignedString(generation)
                + " (a file of an earlier object with this id)");
        }
        long fileData = h.getLong(DATA_LENGTH_OFFSET);
        int fileMetadata = h.getInt(METADATA_LENGTH_OFFSET);
        if (fileData != dataLength || fileMetadata != metadataLength) {
            throw new DamagedException(p, "its header says " + fileData + " bytes of data and " + fileMetadata
                + " of metadata; the index says " + dataLength + " and " + metadataLength);
        }
    }

    /**
     * A spill file that is missing or is not its object's whole, intact file: the object it was is lost.
     * {@link #reason} says why, naming the file but not its directory (the store header names that).
     */
    static final class DamagedException extends IOException {
        private static final long serialVersionUID = 1L;
        private final String reason;

        DamagedException(Path file, String reason) {
            super("spill file " + file + " is damaged: " + reason);
            this.reason = "spill file " + file.getFileName() + " is damaged: " + reason;
        }

        String reason() {
            return reason;
        }
    }

    void delete(byte[] id, int slot, int generation) throws IOException {
        Files.deleteIfExists(path(id, slot, generation));
    }

    /** Writes all of {@code b} at {@code position}; returns its length. */
    private static int writeFully(FileChannel ch, ByteBuffer b, long position) throws IOException {
        int length = b.remaining();
        long at = position;
        while (b.hasRemaining()) {
            at += ch.write(b, at);
        }
        return length;
    }

    private static void readFully(FileChannel ch, ByteBuffer b, long position, Path p) throws IOException {
        long at = position;
        while (b.hasRemaining()) {
            int n = ch.read(b, at);
            if (n < 0) {
                throw new DamagedException(p, "it ends early, at byte " + at);
            }
            at += n;
        }
    }
}
