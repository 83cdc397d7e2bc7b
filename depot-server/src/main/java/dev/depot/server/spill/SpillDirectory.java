package dev.depot.server.spill;

import dev.depot.core.store.StoreAccess;
import dev.depot.core.sys.Native;
import dev.depot.errors.StoreAccessException;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Map;
import java.util.Set;

/**
 * Who may use a spill directory: the same rules as the store directory ({@link StoreAccess}). Spill files hold
 * objects' bytes, and a restore returns what a file holds, so a directory that another user can read, write or
 * point elsewhere lets that user read spilled objects or forge them. The directory must be a directory, not a
 * symbolic link, owned by this process's effective user, with no group or other permission bits (0700 or
 * stricter). Missing directories are made with {@code mkdir} mode 0700 (a umask can only remove bits) and then
 * checked like any other; the existing directory they are made in must be owned by this user or root and not
 * writable by others unless it is sticky (as {@code /tmp}), or another user could rename them away. Spill files
 * are created with mode 0600.
 */
public final class SpillDirectory {
    private static final Set<PosixFilePermission> PRIVATE = PosixFilePermissions.fromString("rwx------");
    private static final int STICKY = 01000;

    /** The permissions of a spill file, set when it is created. */
    static final FileAttribute<Set<PosixFilePermission>> FILE_PERMISSIONS =
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"));

    private SpillDirectory() {
    }

    /**
     * Creates {@code dir} (and missing parents) with mode 0700 when it is missing, then checks it.
     *
     * @throws StoreAccessException when the directory, or the existing one it would be made in, is not safe
     */
    public static void createOrCheck(Path dir) throws IOException {
        Path absolute = dir.toAbsolutePath();
        Deque<Path> missing = new ArrayDeque<>();
        Path existing = absolute;
        while (existing != null && !Files.exists(existing, LinkOption.NOFOLLOW_LINKS)) {
            missing.push(existing);
            existing = existing.getParent();
        }
        if (!missing.isEmpty() && existing != null) {
            checkParent(existing, dir);
        }
        while (!missing.isEmpty()) {
            Path p = missing.pop();
            try {
                Files.createDirectory(p, PosixFilePermissions.asFileAttribute(PRIVATE));
            } catch (FileAlreadyExistsException raced) {
                // made by someone else meanwhile: the checks below decide whether to trust it
            }
            if (!missing.isEmpty()) {
                checkPrivate(p, "the directory " + p + " made for the spill directory " + dir);
            }
        }
        checkPrivate(absolute, "the spill directory " + dir);
    }

    /** A directory, not a link, ours, mode 0700 or stricter. */
    private static void checkPrivate(Path p, String what) throws IOException {
        if (Files.isSymbolicLink(p)) {
            throw new StoreAccessException(what + " is a symbolic link (to " + Files.readSymbolicLink(p) + "), which"
                + " whoever owns it can point elsewhere; refusing it: give the real directory with --spill-dir");
        }
        if (!Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
            throw new StoreAccessException(what + " is not a directory; give --spill-dir a directory, or remove " + p);
        }
        Map<String, Object> a = Files.readAttributes(p, "unix:mode,uid", LinkOption.NOFOLLOW_LINKS);
        int mode = (Integer) a.get("mode");
        int uid = (Integer) a.get("uid");
        int me = Native.geteuid();
        if (uid != me) {
            throw new StoreAccessException(what + " belongs to " + StoreAccess.userName(uid) + ", not to you ("
                + StoreAccess.userName(me) + "), mode " + StoreAccess.octal(mode) + ": its owner could read your"
                + " spilled objects or replace them with forged ones; refusing it: use another --spill-dir");
        }
        if ((mode & 077) != 0) {
            throw new StoreAccessException(what + " (owner " + StoreAccess.userName(uid) + ") has mode "
                + StoreAccess.octal(mode) + ": other users could read spilled objects or swap their files; refusing"
                + " it: run `chmod 700 " + p + "` if its contents are yours, or use another --spill-dir");
        }
    }

    /** The existing directory a missing spill directory is made in: ours or root's, and sticky if others write it. */
    private static void checkParent(Path parent, Path dir) throws IOException {
        Map<String, Object> a = Files.readAttributes(parent, "unix:mode,uid");
        int mode = (Integer) a.get("mode");
        int uid = (Integer) a.get("uid");
        int me = Native.geteuid();
        if (uid != me && uid != 0) {
            throw new StoreAccessException("the spill directory " + dir + " would be made in " + parent + ", which"
                + " belongs to " + StoreAccess.userName(uid) + ", not to you (" + StoreAccess.userName(me) + ") or"
                + " root: its owner could replace it; refusing it: use a --spill-dir in a directory of yours");
        }
        if ((mode & 022) != 0 && (mode & STICKY) == 0) {
            throw new StoreAccessException("the spill directory " + dir + " would be made in " + parent + ", mode "
                + StoreAccess.octal(mode) + ", which other users can write and which is not sticky: they could"
                + " rename it away and put their own in its place; refusing it: use a --spill-dir in a private or"
                + " sticky directory, or run `chmod go-w " + parent + "`");
        }
    }
}
