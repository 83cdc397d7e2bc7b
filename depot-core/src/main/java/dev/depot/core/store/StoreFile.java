package dev.depot.core.store;

import static dev.depot.core.store.StoreHeaderDescriptor.*;

import dev.depot.core.memory.Atomics;
import dev.depot.core.sys.Native;
import dev.depot.errors.DepotException;
import dev.depot.errors.StoreFormatException;
import dev.depot.errors.StoreNotFoundException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The store file, mapped once into this process for as long as it is open: a new mapping costs ~5 µs per page
 * on first touch, so nothing else in Depot maps memory.
 *
 * <p>Creation writes the file under a temporary name, reserves all of it with {@code posix_fallocate} (so a
 * full /dev/shm fails here, clearly, and never later as SIGBUS), writes the header with the major version
 * last (release), and links it into place: an opener sees either no store or a complete one, and of two
 * racing creators exactly one wins (the other gets {@link FileAlreadyExistsException}).
 */
public final class StoreFile implements AutoCloseable {
    public static final String FILE_NAME = "store.depot";
    private static final long VERSION_WAIT_NANOS = 1_000_000_000L;

    private final Path path;
    private final Arena arena;
    private final MemorySegment mapping;
    private final StoreLayout layout;
    /** What fstat said of the mapped file when it was opened: its device and inode identify it later. */
    private final Native.FileStatus opened;

    private StoreFile(Path path, Arena arena, MemorySegment mapping, StoreLayout layout, Native.FileStatus opened) {
        this.path = path;
        this.arena = arena;
        this.mapping = mapping;
        this.layout = layout;
        this.opened = opened;
    }

    public static Path fileIn(Path dir) {
        return dir.resolve(FILE_NAME);
    }

    /**
     * Creates a new store in {@code dir} (made with mode 0700 if missing; an existing one must pass
     * {@link StoreAccess}). A failed create removes what it made, the directory too when it made it.
     *
     * @throws FileAlreadyExistsException when a store exists there already
     */
    public static StoreFile create(Path dir, StoreLayout layout) throws IOException {
        boolean madeDirectory = StoreAccess.createOrCheckDirectory(dir);
        try {
            return createIn(dir, layout);
        } catch (IOException | RuntimeException | Error e) {
            if (madeDirectory) {
                removeIfEmpty(dir, e);
            }
            throw e;
        }
    }

    private static StoreFile createIn(Path dir, StoreLayout layout) throws IOException {
        Path target = fileIn(dir);
        if (Files.exists(target, LinkOption.NOFOLLOW_LINKS)) {
            throw new FileAlreadyExistsException(target.toString());
        }
        // One name per creating thread: concurrent creators must not share (or delete) each other's file.
        Path tmp = dir.resolve(FILE_NAME + ".tmp-" + ProcessHandle.current().pid() + "-" + Thread.currentThread().threadId());
        Files.deleteIfExists(tmp);
        int fd = Native.openNoFollow(tmp, true);
        if (fd < 0) {
            throw new IOException("cannot create " + tmp + ": " + Native.strerror(-fd));
        }
        StoreFile file;
        try {
            StoreAccess.checkFile(tmp, Native.fstat(fd));
            int errno = Native.fallocate(fd, layout.fileLength());
            if (errno != 0) {
                long free = dir.getFileSystem().provider().getFileStore(dir).getUsableSpace();
                throw new DepotException("cannot reserve " + layout.fileLength() + " bytes for the store at " + dir
                    + ": " + Native.strerror(errno) + (errno == Native.ENOSPC ? " (" + free
                    + " bytes free on that file system); choose a smaller --capacity or free space there" : ""));
            }
            file = map(fd, tmp, layout.fileLength());
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(tmp);
            throw e;
        } finally {
            Native.close(fd);
        }
        MemorySegment h = file.mapping;
        h.set(ValueLayout.JAVA_LONG, MAGIC_OFFSET, MAGIC);
        layout.writeTo(h);
        h.set(ValueLayout.JAVA_LONG, CREATE_TIME_OFFSET, System.currentTimeMillis());
        h.set(ValueLayout.JAVA_INT, MINOR_VERSION_OFFSET, MINOR_VERSION);
        StoreFile laidOut = file.withLayout(layout);
        new dev.depot.core.heap.HeapAllocator(laidOut.header(), laidOut.heap()).formatEmpty();
        // Publishes every header field above: an opener that reads a non-zero major version sees them all.
        Atomics.putIntRelease(h, MAJOR_VERSION_OFFSET, MAJOR_VERSION);
        try {
            // link(2), not rename(2): it fails when another creator published a store first, where a rename
            // would silently replace that store under the clients that already have it open.
            Files.createLink(target, tmp);
        } catch (IOException e) {
            file.close();
            Files.deleteIfExists(tmp);
            throw e;
        }
        Files.delete(tmp);
        return new StoreFile(target, file.arena, file.mapping, layout, file.opened);
    }

    private static void removeIfEmpty(Path dir, Throwable failure) {
        try {
            Files.deleteIfExists(dir);
        } catch (IOException notEmpty) {
            // a racing creator put its store there meanwhile: it is not ours to remove
            failure.addSuppressed(notEmpty);
        }
    }

    /**
     * Opens the store in {@code dir}: checks who owns the directory and the file ({@link StoreAccess}), then
     * magic, version, length and region table.
     */
    public static StoreFile open(Path dir) throws IOException {
        StoreAccess.checkDirectory(dir);
        Path p = fileIn(dir);
        int fd = Native.openNoFollow(p, false);
        if (fd == -Native.ENOENT) {
            throw new StoreNotFoundException("no store at " + dir + ": start one with `depot serve --dir " + dir
                + "` or open it embedded");
        }
        if (fd == -Native.ELOOP) {
            throw new dev.depot.errors.StoreAccessException("the store file " + p + " is a symbolic link, which whoever"
                + " made it can point at any file; refusing it: remove it and create the store again");
        }
        if (fd == -Native.EACCES) {
            throw new DepotException("permission denied opening " + p + ": the store belongs to another user");
        }
        if (fd < 0) {
            throw new IOException("cannot open " + p + ": " + Native.strerror(-fd));
        }
        StoreFile raw;
        try {
            Native.FileStatus st = Native.fstat(fd);
            StoreAccess.checkFile(p, st);
            long size = st.size();
            if (size < HEADER_LENGTH) {
                throw new StoreFormatException("store file " + p + " is truncated: " + size + " bytes, less than its "
                    + HEADER_LENGTH + "-byte header; remove it and create the store again");
            }
            raw = map(fd, p, size);
        } finally {
            Native.close(fd);
        }
        try {
            return raw.withLayout(validateHeader(raw.mapping, raw.mapping.byteSize(), p));
        } catch (RuntimeException e) {
            raw.close();
            throw e;
        }
    }

    /**
     * Reads the daemon identity from the header of the store in {@code dir} without mapping it or registering;
     * 0 when there is no readable store, or none this user may trust ({@link StoreAccess}).
     */
    public static long probeDaemonIdentity(Path dir) {
        try {
            StoreAccess.checkDirectory(dir);
        } catch (IOException | DepotException untrusted) {
            return 0;  // nothing in it is believed; opening it says why
        }
        try (FileChannel ch = FileChannel.open(fileIn(dir), StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(Long.BYTES).order(java.nio.ByteOrder.nativeOrder());
            if (ch.read(b, DAEMON_IDENTITY_OFFSET) != Long.BYTES) {
                return 0;
            }
            return b.getLong(0);
        } catch (IOException e) {
            return 0;
        }
    }

    static StoreLayout validateHeader(MemorySegment h, long size, Path p) {
        long magic = h.get(ValueLayout.JAVA_LONG, MAGIC_OFFSET);
        if (magic != MAGIC) {
            throw new StoreFormatException(p + " is not a Depot store (magic 0x" + Long.toHexString(magic)
                + ", expected 0x" + Long.toHexString(MAGIC) + ")");
        }
        long deadline = System.nanoTime() + VERSION_WAIT_NANOS;
        int major;
        while ((major = Atomics.getIntAcquire(h, MAJOR_VERSION_OFFSET)) == 0) {
            if (System.nanoTime() > deadline) {
                throw new StoreFormatException(p + " has no version: its creator died while writing it; remove it");
            }
            Thread.onSpinWait();
        }
        if (major != MAJOR_VERSION) {
            int minor = h.get(ValueLayout.JAVA_INT, MINOR_VERSION_OFFSET);
            throw new StoreFormatException(p + " is format version " + major + "." + minor + " but this Depot reads "
                + MAJOR_VERSION + ".x; use a matching Depot or remove the store");
        }
        return StoreLayout.readFrom(h, size, p);
    }

    private static StoreFile map(int fd, Path p, long size) throws IOException {
        Native.FileStatus st = Native.fstat(fd);
        Arena arena = Arena.ofShared();
        try {
            return new StoreFile(p, arena, Native.mapShared(fd, size, arena), null, st);
        } catch (IOException | RuntimeException e) {
            arena.close();
            throw new IOException("cannot map " + p + ": " + e.getMessage(), e);
        }
    }

    private StoreFile withLayout(StoreLayout l) {
        return new StoreFile(path, arena, mapping, l, opened);
    }

    public Path path() {
        return path;
    }

    public StoreLayout layout() {
        return layout;
    }

    public MemorySegment mapping() {
        return mapping;
    }

    public MemorySegment header() {
        return mapping.asSlice(0, HEADER_LENGTH);
    }

    public MemorySegment clientTable() {
        return mapping.asSlice(layout.clientTableOffset(), layout.indexOffset() - layout.clientTableOffset());
    }

    public MemorySegment index() {
        return mapping.asSlice(layout.indexOffset(), (long) layout.indexSlots() * dev.depot.core.index.IndexEntryDescriptor.ENTRY_LENGTH);
    }

    /** The notification region; null in a format 1.1 file, which has none. */
    public MemorySegment notifications() {
        return layout.hasNotifications() ? mapping.asSlice(layout.notificationOffset(),
            dev.depot.core.notify.NotificationDescriptor.REGION_LENGTH) : null;
    }

    public MemorySegment heap() {
        return mapping.asSlice(layout.heapOffset(), layout.heapLength());
    }

    /**
     * The length the mapped file has now, or -1 when the store path no longer names the file that was mapped
     * (removed or replaced: then its length cannot be seen from here). A length below the layout's means the
     * file was truncated under the mapping: touching the lost pages faults (SIGBUS, an {@code InternalError} in
     * Java).
     */
    public long currentLength() {
        Native.FileStatus now = Native.lstat(path);
        if (now == null || now.inode() != opened.inode() || now.device() != opened.device()) {
            return -1;
        }
        return now.size();
    }

    /** Unmaps the file. Every segment sliced from it becomes inaccessible. */
    @Override
    public void close() {
        arena.close();
    }
}
