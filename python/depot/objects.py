"""What the client hands out: views of sealed objects, writers of new ones, and store figures."""

import warnings
import weakref
from dataclasses import dataclass

from .errors import ViewReleasedError


class ObjectView:
    """A sealed object, read in place: ``data`` is a read-only ``memoryview`` of shared memory, not a copy.

    The object is pinned for this view (it cannot be deleted or evicted, and its bytes do not change) until
    ``release()``, or until the view is garbage-collected, or the client closes, or its process dies. The
    pin lives on for as long as ``data`` or any buffer made from it (a slice, a NumPy array) is alive, even
    after ``release()``: such buffers never see another object's bytes, and never lose their memory.
    A context manager: leaving the ``with`` block releases.
    """

    __slots__ = ("id", "offset", "size", "metadata", "_mapping", "_pin", "_data", "_exporter", "_released",
                 "__weakref__")

    def __init__(self, mapping, oid, located):
        self.id = oid
        #: offset of the data in the store file
        self.offset = located.data_offset
        self.size = located.size
        #: the object's metadata (a copy, bytes)
        metadata = located.metadata
        self.metadata = metadata if metadata is not None else mapping.read(located.metadata_offset,
                                                                           located.metadata_length)
        self._mapping = mapping
        self._pin = located.pin
        self._data = None
        self._exporter = None
        self._released = False

    @property
    def data(self):
        """The data: a read-only, zero-copy ``memoryview`` that keeps the object pinned while it is alive."""
        if self._released:
            raise ViewReleasedError("view of object %s is released; get it again" % self.id)
        data = self._data
        if data is None:
            pin = self._pin
            if pin is None:
                raise ViewReleasedError("view of object %s is released; get it again" % self.id)
            data = self._mapping.span(self.offset, self.size, pin, readonly=True)
            self._exporter = weakref.ref(data.obj)
            self._data = data
        return data

    @property
    def released(self):
        return self._released

    def to_bytes(self):
        """A copy of the data."""
        return bytes(self.data)

    def release(self):
        """Releases the pin, unless buffers made from ``data`` are still alive: then it is released when the
        last of them is collected. ``view.data`` can no longer be used. Harmless when already released."""
        if self._released:
            return
        self._released = True
        # The memoryview handed out is not released: NumPy's frombuffer, for one, keeps it as its base without
        # holding an export, and would read freed memory. Dropping our reference frees it, and with it the
        # pin, unless someone else still holds it.
        self._data = None
        pin, self._pin = self._pin, None
        exporter = self._exporter
        if pin is not None and (exporter is None or exporter() is None):
            pin.release()

    def _pinned(self):
        return self._pin is not None and self._pin.held

    def _detach(self):
        """Hands the pin over to buffers made from ``data``: the view is released, and the pin lives as long
        as they do. The same as ``release()``, which leaves the pin to live buffers too."""
        self.release()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()

    def __repr__(self):
        return "ObjectView(%s, size=%d%s)" % (self.id, self.size, ", released" if self._released else "")


class ObjectWriter:
    """An object being created: fill ``data`` (a writable ``memoryview`` of shared memory), then ``seal()``.

    A context manager: leaving the ``with`` block without sealing aborts the object and frees its space.
    """

    __slots__ = ("_client", "id", "offset", "size", "_data", "_exporter", "_state", "_epoch", "_local",
                 "__weakref__")

    def __init__(self, client, oid, offset, size, data, epoch, local=None):
        self._client = client
        self.id = oid
        self.offset = offset
        self.size = size
        self._data = data
        self._exporter = weakref.ref(data.obj)
        self._state = "open"
        #: the connection (and process) it was created on: only that one can seal or abort it
        self._epoch = epoch
        #: a LocalCreate when the client created it without the daemon (it is then sealed and aborted so too)
        self._local = local

    @property
    def data(self):
        """The object's bytes, writable, zero-copy. Not usable after seal or abort."""
        if self._state != "open":
            raise ViewReleasedError("writer of object %s is %s; its data can no longer be written"
                                    % (self.id, self._state))
        return self._data

    @property
    def sealed(self):
        return self._state == "sealed"

    def seal(self):
        """Makes the object immutable and visible to every process; wakes processes waiting for it."""
        self.data  # raises unless open
        self._client._seal(self)
        self._state = "sealed"
        self._data = None
        if self._exporter() is not None:
            warnings.warn("writer of object %s sealed while buffers made from its data are still alive; writing "
                          "through them would change a sealed object" % self.id, RuntimeWarning, stacklevel=2)
        self._client._writer_done(self)

    def abort(self):
        """Discards the object and frees its space. Harmless after seal or abort."""
        if self._state != "open":
            return
        self._state = "aborted"
        self._data = None
        try:
            # While buffers made from the data are alive the object stays unsealed (its space is not reused
            # under them); it is aborted once they are collected.
            self._client._abort(self, self._exporter)
        finally:
            self._client._writer_done(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.abort()

    def __repr__(self):
        return "ObjectWriter(%s, size=%d, %s)" % (self.id, self.size, self._state)


@dataclass(frozen=True)
class StoreStats:
    """Figures of the store (as Java's ``StoreStats``), plus what this connection holds."""

    capacity_bytes: int
    used_bytes: int
    free_bytes: int
    pinned_bytes: int
    object_count: int
    sealed_count: int
    unsealed_bytes: int
    client_count: int
    eviction_count: int
    evicted_bytes: int
    largest_free_block: int
    fragmentation: float
    max_objects: int
    daemon_pid: int
    connection_pins: int
    connection_writers: int
    #: bytes and count of KEEP objects in memory (never evicted)
    kept_bytes: int
    kept_objects: int
    #: bytes (heap block sizes) and count of KEEP objects only on disk, in the daemon's spill directory
    spilled_bytes: int
    spilled_objects: int
    #: spills and restores since the store was created
    spill_count: int
    restore_count: int
    #: the daemon's spill directory, or None when no daemon spills
    spill_directory: object
    #: spill files the daemon could not write plus spilled objects it could not restore (lost, or no room)
    spill_failure_count: int


@dataclass(frozen=True)
class ObjectInfo:
    """One object as listed by ``Client.list()``. Times are seconds since the epoch."""

    id: object
    state: str
    data_size: int
    metadata_size: int
    pin_count: int
    created: float
    last_access: float
