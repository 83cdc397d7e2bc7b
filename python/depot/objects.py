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
        self.metadata = mapping.read(located.metadata_offset, located.metadata_length)
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
        last of them is collected. ``data`` can no longer be used. Harmless when already released."""
        if self._released:
            return
        self._released = True
        data, self._data = self._data, None
        if data is not None:
            try:
                data.release()
            except BufferError:
                pass  # exported (to NumPy, say): those buffers hold the pin until they are collected
            del data
        pin, self._pin = self._pin, None
        exporter = self._exporter
        if pin is not None and (exporter is None or exporter() is None):
            pin.release()

    def _pinned(self):
        return self._pin is not None and self._pin.held

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

    __slots__ = ("_client", "id", "offset", "size", "_data", "_state", "_epoch", "__weakref__")

    def __init__(self, client, oid, offset, size, data, epoch):
        self._client = client
        self.id = oid
        self.offset = offset
        self.size = size
        self._data = data
        self._state = "open"
        #: the connection (and process) it was created on: only that one can seal or abort it
        self._epoch = epoch

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
        self._close_data()
        self._client._seal(self)
        self._state = "sealed"
        self._client._writer_done(self)

    def abort(self):
        """Discards the object and frees its space. Harmless after seal or abort."""
        if self._state != "open":
            return
        self._state = "aborted"
        self._close_data()
        try:
            self._client._abort(self)
        finally:
            self._client._writer_done(self)

    def _close_data(self):
        try:
            self._data.release()
        except BufferError:
            warnings.warn("writer of object %s finished while buffers made from its data are still alive"
                          % self.id, RuntimeWarning, stacklevel=3)

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
