"""The one mapping of a store file per process, opened only after checking who owns it.

The client never maps a path the daemon names: it opens ``DIR/store.depot`` itself, refusing a directory or
file that is a symbolic link, belongs to another user or grants any group or other permission (another user
could otherwise read and rewrite every object), and checks what it opened with ``fstat``, so there is no
window between the check and the use. The daemon's HELLO reply only confirms the file's (device, inode).

A mapping is never unmapped while anything made from it is alive: every buffer handed out holds (through
its owner) the ``StoreMapping``, and the mapping goes away with the last of them, never under them.
"""

import ctypes
import mmap
import os
import stat
import struct
import threading
import time
import weakref

from ._layout import ClientTableDescriptor as CT
from ._layout import HeapBlockDescriptor as HB
from ._layout import IndexEntryDescriptor as IE
from ._layout import NotificationDescriptor as ND
from ._layout import StoreHeaderDescriptor as H
from ._process import on_fork_in_child
from .errors import PermissionDeniedError, StoreFormatError, StoreNotFoundError, VersionMismatchError

STORE_FILE_NAME = "store.depot"
# how long an opener waits for a store's creator to publish its version (as Java's StoreFile)
_VERSION_WAIT_SECONDS = 1.0

_U64 = struct.Struct("<Q")
_U32 = struct.Struct("<I")

_open_lock = threading.Lock()
_mappings = weakref.WeakValueDictionary()


def _new_lock_in_child():
    global _open_lock
    _open_lock = threading.Lock()  # another thread of the parent may have held it at the fork


def _owner_text(uid):
    try:
        import pwd
        return "%s (uid %d)" % (pwd.getpwuid(uid).pw_name, uid)
    except (ImportError, KeyError):
        return "uid %d" % uid


def check_private(path, st, what, fix):
    """Refuses ``path`` (its ``lstat`` or ``fstat`` result ``st``) unless it is ours alone."""
    if stat.S_ISLNK(st.st_mode):
        raise PermissionDeniedError("the %s %s is a symbolic link; Depot refuses links there (another user could "
                                    "point it anywhere): %s" % (what, path, fix))
    me = os.geteuid()
    if st.st_uid != me:
        raise PermissionDeniedError("the %s %s belongs to %s, not to you (%s): another user may read and rewrite "
                                    "what you store there; %s" % (what, path, _owner_text(st.st_uid),
                                                                  _owner_text(me), fix))
    if st.st_mode & 0o077:
        raise PermissionDeniedError("the %s %s has mode %04o, which lets other users in; it must have no group or "
                                    "other permission bits: %s" % (what, path, stat.S_IMODE(st.st_mode), fix))


def check_directory(directory):
    """The store directory exists, is a directory, and is ours alone (lstat: a link is refused, not followed)."""
    try:
        st = os.lstat(directory)
    except FileNotFoundError:
        raise StoreNotFoundError("there is no Depot store at %s; start a daemon with `depot serve --dir %s`"
                                 % (directory, directory)) from None
    except PermissionError:
        raise PermissionDeniedError("cannot look at the store directory %s: permission denied; use a directory of "
                                    "your own (--dir, $DEPOT_DIR)" % directory) from None
    if not stat.S_ISDIR(st.st_mode) and not stat.S_ISLNK(st.st_mode):
        raise StoreNotFoundError("%s is not a directory, so it holds no Depot store; pass the store's directory"
                                 % directory)
    check_private(directory, st, "store directory", "remove it and let `depot serve --dir %s` create it, or use "
                  "another --dir" % directory)


def open_mapping(directory):
    """This process's mapping of the store in ``directory`` (shared by every client of the same file)."""
    check_directory(directory)
    path = os.path.join(directory, STORE_FILE_NAME)
    try:
        fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        raise StoreNotFoundError("there is no store file %s; start a daemon with `depot serve --dir %s`"
                                 % (path, directory)) from None
    except PermissionError:
        raise PermissionDeniedError("cannot open the store file %s: permission denied; it must belong to you"
                                    % path) from None
    except OSError as e:
        if e.errno == 40:  # ELOOP: the last component is a symbolic link
            raise PermissionDeniedError("the store file %s is a symbolic link; Depot refuses links there: remove "
                                        "the store directory and start the daemon again" % path) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise StoreFormatError("the store file %s is not a regular file" % path)
        check_private(path, st, "store file", "remove the store directory %s and start the daemon again"
                      % directory)
        key = (st.st_dev, st.st_ino)
        with _open_lock:
            existing = _mappings.get(key)
            if existing is not None and existing.file_length == st.st_size:
                return existing
            mapping = StoreMapping(path, fd, st)
            _mappings[key] = mapping
            return mapping
    finally:
        os.close(fd)


class StoreMapping:
    """The whole store file, mapped shared and read-write, with the layout its header describes.

    ``base`` is the mapping's address for the atomics; ``span()`` makes buffers of object data that keep
    an owner (and through it this mapping) alive for as long as they are.
    """

    def __init__(self, path, fd, st):
        self.path = path
        self.device = st.st_dev
        self.inode = st.st_ino
        size = st.st_size
        if size < H.HEADER_LENGTH:
            raise StoreFormatError("the store file %s has %d bytes, less than its %d-byte header: it is not a store "
                                   "or was truncated; remove it and start the daemon again"
                                   % (path, size, H.HEADER_LENGTH))
        self.mm = mmap.mmap(fd, size, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ | mmap.PROT_WRITE)
        # An export of the mmap held for the mapping's life: it cannot be closed under anything made from it.
        self._anchor = ctypes.c_char.from_buffer(self.mm)
        self.base = ctypes.addressof(self._anchor)
        self.file_length = size
        self._read_header()

        class Span(ctypes.c_ubyte * size):
            """The whole mapping as a buffer exporter that holds ``owner`` (a pin, a writer) while exported."""

            __slots__ = ("owner",)

        self._span_type = Span

    def _read_header(self):
        from . import _atomics
        path = self.path
        if self.u64(H.MAGIC_OFFSET) != H.MAGIC:
            raise StoreFormatError("%s is not a Depot store file (wrong magic number)" % path)
        deadline = time.monotonic() + _VERSION_WAIT_SECONDS
        while True:
            major = _atomics.get_int_acquire(self.base + H.MAJOR_VERSION_OFFSET)
            if major != 0 or time.monotonic() > deadline:
                break
            time.sleep(0.01)  # the creator publishes the version last; it takes microseconds
        if major != H.MAJOR_VERSION:
            if major == 0:
                raise StoreFormatError("the store file %s was never finished by its creator (version 0); remove it "
                                       "and start the daemon again" % path)
            raise VersionMismatchError("the store file %s has format version %d.%d; this client reads version %d: "
                                       "use a client of the same Depot release as the daemon"
                                       % (path, major, self.u32(H.MINOR_VERSION_OFFSET), H.MAJOR_VERSION))
        recorded = self.u64(H.FILE_LENGTH_OFFSET)
        if recorded != self.file_length:
            raise StoreFormatError("the store file %s has %d bytes but its header says %d: it was truncated or "
                                   "extended; remove it and start the daemon again"
                                   % (path, self.file_length, recorded))
        self.client_table_offset = self.u64(H.CLIENT_TABLE_OFFSET_OFFSET)
        self.max_clients = self.u32(H.MAX_CLIENTS_OFFSET)
        self.pins_per_client = self.u32(H.PINS_PER_CLIENT_OFFSET)
        self.slot_length = (CT.PIN_RECORDS_OFFSET + self.pins_per_client * CT.PIN_RECORD_LENGTH + 127) & ~127
        self.index_offset = self.u64(H.INDEX_OFFSET_OFFSET)
        self.index_slots = self.u64(H.INDEX_SLOTS_OFFSET)
        self.heap_offset = self.u64(H.HEAP_OFFSET_OFFSET)
        self.heap_length = self.u64(H.HEAP_LENGTH_OFFSET)
        self.minor_version = self.u32(H.MINOR_VERSION_OFFSET)
        # format 1.1 files have no notification region (and a zero where its offset is now)
        self.notification_offset = (self.u64(H.NOTIFICATION_OFFSET_OFFSET)
                                    if self.minor_version >= H.NOTIFICATIONS_MINOR_VERSION else 0)
        problems = []
        if self.client_table_offset < H.HEADER_LENGTH or self.client_table_offset % 128:
            problems.append("client table at %d" % self.client_table_offset)
        if self.client_table_offset + self.max_clients * self.slot_length > self.index_offset:
            problems.append("client table of %d slots overlaps the index at %d" % (self.max_clients, self.index_offset))
        if self.index_slots == 0 or self.index_slots & (self.index_slots - 1) or self.index_offset % IE.ENTRY_LENGTH:
            problems.append("index of %d slots at %d" % (self.index_slots, self.index_offset))
        if self.index_offset + self.index_slots * IE.ENTRY_LENGTH > self.heap_offset:
            problems.append("index overlaps the heap at %d" % self.heap_offset)
        if self.heap_offset + self.heap_length != self.file_length or self.heap_offset % HB.HEADER_LENGTH:
            problems.append("heap %d+%d does not end the %d-byte file" % (self.heap_offset, self.heap_length,
                                                                          self.file_length))
        if self.notification_offset and (self.notification_offset % 128 or self.notification_offset < self.index_offset
                                         + self.index_slots * IE.ENTRY_LENGTH or self.notification_offset
                                         + ND.REGION_LENGTH > self.heap_offset):
            problems.append("notification region at %d" % self.notification_offset)
        if self.max_clients == 0 or self.pins_per_client == 0:
            problems.append("%d client slots of %d pins" % (self.max_clients, self.pins_per_client))
        if problems:
            raise StoreFormatError("the store file %s has a region table that does not add up (%s); run `depot "
                                   "doctor --dir %s`" % (path, "; ".join(problems), os.path.dirname(path)))

    # ---- plain reads of fields that are immutable while the caller holds what protects them -------------

    def u64(self, offset):
        return _U64.unpack_from(self.mm, offset)[0]

    def u32(self, offset):
        return _U32.unpack_from(self.mm, offset)[0]

    def read(self, offset, length):
        """A copy of ``[offset, offset + length)``."""
        return self.mm[offset:offset + length]

    def span(self, offset, length, owner, readonly):
        """A zero-copy ``memoryview`` of ``[offset, offset + length)`` that keeps ``owner`` alive while it, or
        any buffer made from it (slices, NumPy arrays), is alive."""
        exporter = self._span_type.from_address(self.base)
        exporter.owner = owner
        view = memoryview(exporter).cast("B")[offset:offset + length]
        return view.toreadonly() if readonly else view


on_fork_in_child(_new_lock_in_child)
