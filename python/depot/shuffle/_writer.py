"""The map side of a shuffle: ``ShuffleWriter``, one map's slices written in place in shared memory."""

from ._arrays import numpy
from ._maps import KEEP, put_owner, put_status


class ShuffleWriter:
    """The writer of one map: one writable ``memoryview`` of shared memory per partition. ``commit()`` seals
    the slices, then the status record readers wait for; ``fail(reason)``, or leaving the ``with`` block
    without commit, records the failure so that readers fail at once."""

    def __init__(self, shuffle, map_index, sizes):
        shuffle._check_map(map_index)
        if len(sizes) != shuffle.partitions:
            raise ValueError("shuffle %s has %d partitions but %d slice lengths were given"
                             % (shuffle.id, shuffle.partitions, len(sizes)))
        for size in sizes:
            if size < 0:
                raise ValueError("slice lengths must be >= 0, got %d" % size)
            shuffle._metadata(size)
        self.shuffle = shuffle
        self.map = map_index
        self.sizes = sizes
        self._objects = []
        self._slices = []
        self._state = "open"
        put_owner(shuffle, map_index)
        try:
            if shuffle.layout == "per_map":
                total = sum(sizes)
                data = self._create(shuffle._ids.map_data(map_index), total) if total else memoryview(b"")
                at = 0
                for size in sizes:
                    self._slices.append(data[at:at + size])
                    at += size
            else:
                for p, size in enumerate(sizes):
                    self._slices.append(self._create(shuffle._ids.slice(map_index, p), size) if size
                                        else memoryview(bytearray()))
        except BaseException as e:
            self.fail("could not create its slices: %s" % e)
            raise

    def _create(self, oid, size):
        w = self.shuffle.client.create(oid, size, self.shuffle._metadata(size), **KEEP)
        self._objects.append(w)
        return w.data

    def partition(self, p):
        """The writable slice of partition ``p`` (a ``memoryview``; empty for an empty slice)."""
        self._check_open()
        return self._slices[p]

    def array(self, p):
        """The slice of partition ``p`` as a writable NumPy array of the shuffle's dtype."""
        np = numpy()
        if not self.shuffle.dtype:
            raise ValueError("shuffle %s has no dtype: use partition(p), a memoryview" % self.shuffle.id)
        return np.frombuffer(self.partition(p), dtype=self.shuffle.dtype)

    def commit(self):
        """Seals every slice, then the status record (so a reader that sees it finds every slice sealed)."""
        self._check_open()
        self._slices = []
        try:
            for w in self._objects:
                w.seal()
            put_status(self.shuffle, self.map, True, self.sizes, "")
        except BaseException as e:
            self.fail("could not commit: %s" % e)
            raise
        self._state = "committed"

    def fail(self, reason):
        """Gives up the map: aborts its slices and records ``reason`` for the readers. Harmless after commit."""
        if self._state != "open":
            return
        self._state = "failed"
        self._slices = []
        for w in self._objects:
            if w.sealed:
                self.shuffle.client.delete(w.id)
            else:
                w.abort()
        put_status(self.shuffle, self.map, False, self.sizes, reason)

    def _check_open(self):
        if self._state != "open":
            raise ValueError("the writer of map %d is %s" % (self.map, self._state))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.fail("its writer was closed without commit" if exc[0] is None else "%s: %s" % (exc[0].__name__, exc[1]))
