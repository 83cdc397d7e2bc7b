"""The reduce side of a shuffle: ``ShuffleReader``, one partition's slices of every map read in place, once each
map committed; and the errors of maps that fail or do not commit in time."""

import time

from .._waiting import seconds_left
from ..errors import DepotError, ObjectMissingError
from ._arrays import numpy
from ._maps import alive, owner_identity
from ._records import decode_status

#: how often a reader waiting for a map checks that the map's process still lives (seconds)
LIVENESS_CHECK = 0.1


class MapFailedError(DepotError):
    """A map failed or its process died: the shuffle cannot complete. ``map`` is its index."""

    def __init__(self, message, map_index):
        super().__init__(message)
        self.map = map_index


class MapTimeoutError(DepotError):
    """A map did not commit within a reader's timeout. ``map`` is its index."""

    def __init__(self, message, map_index):
        super().__init__(message)
        self.map = map_index


def _await_committed(shuffle, m, deadline):
    """The lengths of map ``m``'s slices once it committed, by ``deadline`` (``time.monotonic_ns()``; None:
    forever); raises MapFailedError or MapTimeoutError."""
    client = shuffle.client
    ids = shuffle._ids
    while True:
        left = seconds_left(deadline)
        wait = LIVENESS_CHECK if left is None else min(LIVENESS_CHECK, left)
        try:
            with client.get(ids.status(m), wait) as view:
                committed, writer, lengths, message = decode_status(view.data, m, shuffle.partitions)
        except ObjectMissingError:
            pass
        else:
            if not committed:
                raise MapFailedError("map %d of shuffle %s failed in pid %d: %s" % (m, shuffle.id, writer >> 32,
                                                                                   message), m)
            return lengths
        owner = owner_identity(client, ids, m)
        if owner and not alive(owner):
            if not client.contains(ids.status(m)):
                raise MapFailedError("map %d of shuffle %s died (pid %d exited) before committing its output"
                                     % (m, shuffle.id, owner >> 32), m)
            continue
        if deadline is not None and time.monotonic_ns() >= deadline:
            raise MapTimeoutError("map %d of shuffle %s did not commit in time: it %s" % (
                m, shuffle.id, "is still running in pid %d" % (owner >> 32) if owner
                else "has not started (no writer opened it)"), m)


class ShuffleReader:
    """The reader of one partition: every map's slice for it, in map order, read in place. Opening it waits
    for the maps still running. ``arrays()`` hands out NumPy arrays that keep their objects pinned while they
    live; ``slices()`` hands out ``memoryview``s valid until ``close()``. A context manager."""

    def __init__(self, shuffle, partition, timeout):
        if not 0 <= partition < shuffle.partitions:
            raise IndexError("partition %d is not in 0..%d of shuffle %s" % (partition, shuffle.partitions - 1,
                                                                             shuffle.id))
        self.shuffle = shuffle
        self.partition = partition
        deadline = None if timeout is None else time.monotonic_ns() + int(timeout * 1e9)
        #: per map: (length, offset in its object)
        self._where = []
        for m in range(shuffle.maps):
            lengths = _await_committed(shuffle, m, deadline)
            self._where.append((lengths[partition], sum(lengths[:partition])))
        self._views = []

    @property
    def nbytes(self):
        """Total bytes of this partition over all maps."""
        return sum(length for length, _ in self._where)

    def _object(self, m):
        ids = self.shuffle._ids
        return ids.map_data(m) if self.shuffle.layout == "per_map" else ids.slice(m, self.partition)

    def _get(self, m):
        oid = self._object(m)
        try:
            return self.shuffle.client.get(oid, 0)
        except ObjectMissingError:
            raise DepotError("map %d of shuffle %s committed, but its slice for partition %d (object %s) is gone: "
                             "was the shuffle closed?" % (m, self.shuffle.id, self.partition, oid)) from None

    def slices(self):
        """One read-only ``memoryview`` per map (empty where a map wrote nothing), valid until ``close()``."""
        out = []
        for m, (length, offset) in enumerate(self._where):
            if length == 0:
                out.append(memoryview(b""))
                continue
            view = self._get(m)
            self._views.append(view)
            start = offset if self.shuffle.layout == "per_map" else 0
            out.append(view.data[start:start + length])
        return out

    def arrays(self, dtype=None):
        """One read-only NumPy array per map, over shared memory (no copy), of the shuffle's dtype (or
        ``dtype``). Each keeps its object pinned until it (and every array made from it) is collected."""
        np = numpy()
        dtype = np.dtype(dtype or self.shuffle.dtype or "u1")
        out = []
        for m, (length, offset) in enumerate(self._where):
            if length == 0:
                out.append(np.empty(0, dtype=dtype))
                continue
            view = self._get(m)
            start = offset if self.shuffle.layout == "per_map" else 0
            try:
                array = np.frombuffer(view.data, dtype=dtype, count=length // dtype.itemsize, offset=start)
            except BaseException:
                view.release()
                raise
            # As get_array: the pin now belongs to the array (its buffer's exporter holds it); the view is dropped.
            out.append(array)
        return out

    def array(self, dtype=None):
        """This partition as one NumPy array: a copy, the slices concatenated in map order."""
        np = numpy()
        parts = self.arrays(dtype)
        return np.concatenate(parts) if parts else np.empty(0, dtype=dtype or self.shuffle.dtype)

    def frames(self):
        """The objects ``write_frames`` stored for this partition, one per map (DataFrames: columns zero-copy)."""
        from ..pickling import get_object
        if self.shuffle.layout != "per_slice":
            raise ValueError("frames are stored per slice: this shuffle's layout is %s" % self.shuffle.layout)
        return [get_object(self.shuffle.client, self.shuffle._ids.slice(m, self.partition), 0)
                for m in range(self.shuffle.maps)]

    def close(self):
        """Releases the pins of ``slices()``. Harmless twice."""
        for v in self._views:
            v.release()
        self._views = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
