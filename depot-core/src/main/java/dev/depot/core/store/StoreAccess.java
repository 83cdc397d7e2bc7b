package dev.depot.core.store;

import dev.depot.core.sys.Native;
import dev.depot.errors.StoreAccessException;
import dev.depot.errors.StoreNotFoundException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;

/**
 * Who may use a store: only the user who owns it. Before anything in a store is trusted, its directory and its
 * file must be owned by this process's effective user, carry no group or other permission bits, and not be
 * symbolic links; otherwise another user could have made them (the default directory's name is predictable) to
 * read and rewrite every object stored there, or swap the control socket. The directory is checked with
 * {@code lstat}; the file with {@code fstat} on the descriptor that is then mapped, so what is checked is what
 * is used. Creation leaves no window: {@code mkdir} with mode 0700 and {@code open(O_CREAT|O_EXCL|O_NOFOLLOW)}
 * with mode 0600 (a umask can only remove bits), then the same checks on what was made.
 */
public final class StoreAccess {
    private static final int PRIVATE_DIRECTORY = 0700;

    private StoreAccess() {
    }

    /**
     * Creates {@code dir} with mode 0700 when it is missing, then checks it ({@link #checkDirectory}).
     *
     * @return true when this call created the directory (so a failed create can remove it again)
     */
    static boolean createOrCheckDirectory(Path dir) throws IOException {
        boolean created = false;
        if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            Path parent = dir.toAbsolutePath().getParent();
            if (parent != null && !Files.isDirectory(parent)) {
                Files.createDirectories(parent, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            }
            try {
                Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
                created = true;
            } catch (FileAlreadyExistsException raced) {
                // another creator (or someone else) made it first: the checks below decide whether to trust it
            }
        }
        checkDirectory(dir);
        return created;
    }

    /** Checks the store directory with {@code lstat}: a directory, not a link, ours, mode 0700 or stricter. */
    static void checkDirectory(Path dir) throws IOException {
        Map<String, Object> a;
        try {
            a = Files.readAttributes(dir, "unix:mode,uid", LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            throw new StoreNotFoundException("no store at " + dir + ": start one with `depot serve --dir " + dir
                + "` or open it embedded");
        }
        int mode = (Integer) a.get("mode");
        int uid = (Integer) a.get("uid");
        if (Files.isSymbolicLink(dir)) {
            throw new StoreAccessException("the store directory " + dir + " is a symbolic link (to "
                + Files.readSymbolicLink(dir) + "), which whoever owns it can point elsewhere; refusing it: give the"
                + " real directory with --dir");
        }
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            throw new StoreAccessException(dir + " is not a directory (a store is a directory holding "
                + StoreFile.FILE_NAME + "); give --dir a directory, or remove " + dir);
        }
        int me = Native.geteuid();
        if (uid != me) {
            throw new StoreAccessException("the store directory " + dir + " belongs to " + userName(uid) + ", not to you ("
                + userName(me) + "), mode " + octal(mode) + ": another user may have made it to read or change your"
                + " objects; refusing it: use another --dir, or have it removed and start again");
        }
        if ((mode & 077) != 0) {
            throw new StoreAccessException("the store directory " + dir + " (owner " + userName(uid) + ") has mode "
                + octal(mode) + ": other users can enter it and swap its files; refusing it: run `chmod 700 " + dir
                + "` if its contents are yours, or use another --dir");
        }
    }

    /** Checks the store file by what {@code fstat} says of the open descriptor. */
    static void checkFile(Path file, Native.FileStatus st) {
        if (!st.isRegularFile()) {
            throw new StoreAccessException("the store file " + file + " is not a regular file (mode " + octal(st.mode())
                + "); refusing it: remove it and create the store again");
        }
        int me = Native.geteuid();
        if (st.uid() != me) {
            throw new StoreAccessException("the store file " + file + " belongs to " + userName(st.uid()) + ", not to you ("
                + userName(me) + "), mode " + octal(st.permissions()) + ": another user may read or change what you"
                + " store there; refusing it: use another --dir, or have the store removed and start again");
        }
        if ((st.permissions() & 077) != 0) {
            throw new StoreAccessException("the store file " + file + " (owner " + userName(st.uid()) + ") has mode "
                + octal(st.permissions()) + ": other users can map it and read or change your objects; refusing it:"
                + " run `chmod 600 " + file + "` if the store is yours (processes that mapped it before keep their"
                + " mappings: restart them), or remove the store");
        }
    }

    /** {@code 0777}-style, for messages. */
    public static String octal(int mode) {
        return String.format("0%03o", mode & 07777);
    }

    /** {@code alice (uid 1000)}; {@code uid 1000} when the name is unknown. */
    public static String userName(int uid) {
        try {
            for (String line : Files.readAllLines(Path.of("/etc/passwd"), StandardCharsets.UTF_8)) {
                String[] f = line.split(":", 4);
                if (f.length >= 3 && f[2].equals(Integer.toString(uid))) {
                    return f[0] + " (uid " + uid + ")";
                }
            }
        } catch (IOException | RuntimeException e) {
            // the name is only for the message
        }
        return "uid " + uid;
    }
}
