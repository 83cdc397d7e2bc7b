"""``Shuffle``: a shuffle's handle, which creates or opens it, hands out its writers and readers, and deletes
its objects when the creating handle closes."""

from ._abandoned import sweep_abandoned
from ._arrays import flat_bytes, numpy
from ._ids import ShuffleIds
from ._maps import KEEP, put_owner, put_status
from ._reader import ShuffleReader
from ._records import LAYOUT_PER_MAP, LAYOUT_PER_SLICE, MAX_DTYPE_LENGTH, decode_manifest, encode_manifest
from ._writer import ShuffleWriter

_LAYOUT_NAMES = {"per_slice": LAYOUT_PER_SLICE, "per_map": LAYOUT_PER_MAP}


class Shuffle:
    """A shuffle of ``maps`` x ``partitions`` slices. ``Shuffle.create`` returns the owning handle (closing it
    deletes every object of the shuffle); ``Shuffle.open`` returns a handle in another process. A context
    manager."""

    def __init__(self, client, shuffle_id, maps, partitions, layout, dtype, owning):
        self.client = client
        self.id = shuffle_id
        self.maps = maps
        self.partitions = partitions
        self.layout = layout
        #: "" for plain bytes, else the NumPy type string of every slice's elements
        self.dtype = dtype
        self.owning = owning
        self._ids = ShuffleIds(shuffle_id)
        self._closed = False

    @classmethod
    def create(cls, client, shuffle_id, maps, partitions, layout="per_map", dtype=""):
        """Creates a shuffle and seals its manifest, after deleting the shuffles whose creator died
        (``sweep_abandoned``).

        Parameters
        ----------
        client : depot.Client
        shuffle_id : str
            Names the shuffle in the store; every process opens it by this id.
        maps, partitions : int
        layout : {"per_map", "per_slice"}
            One object per map holding all its slices (the default), or one object per slice (needed by
            ``write_frames``).
        dtype : str or numpy.dtype
            "" for plain bytes, else the element type of every slice (``"<f8"``, ``"<i8"``, ...).
        """
        if maps <= 0 or partitions <= 0:
            raise ValueError("a shuffle needs at least one map and one partition, got %d and %d" % (maps, partitions))
        if layout not in _LAYOUT_NAMES:
            raise ValueError("layout is 'per_map' or 'per_slice', got %r" % (layout,))
        if dtype != "":
            dtype = numpy().dtype(dtype).str
        if len(dtype) > MAX_DTYPE_LENGTH:
            raise ValueError("dtype %r is longer than %d" % (dtype, MAX_DTYPE_LENGTH))
        s = cls(client, shuffle_id, maps, partitions, layout, dtype, True)
        sweep_abandoned(client)
        record = encode_manifest(_LAYOUT_NAMES[layout], dtype, maps, partitions)
        client.put(s._ids.manifest(), record, metadata=shuffle_id.encode("utf-8"), **KEEP)
        return s

    @classmethod
    def open(cls, client, shuffle_id, timeout=None):
        """Opens a shuffle another process created, waiting up to ``timeout`` seconds for its manifest."""
        ids = ShuffleIds(shuffle_id)
        with client.get(ids.manifest(), timeout) as view:
            data = bytes(view.data)
        layout, dtype, maps, partitions, _ = decode_manifest(data, shuffle_id, ids.manifest())
        return cls(client, shuffle_id, maps, partitions, layout, dtype, False)

    # ---- map side ---------------------------------------------------------------------------------------

    def writer(self, map_index, sizes):
        """The writer of map ``map_index``, with the byte length of each of its slices."""
        self._check_open()
        return ShuffleWriter(self, map_index, [int(x) for x in sizes])

    def write_map(self, map_index, slices):
        """Writes map ``map_index``'s slices, one per partition (NumPy arrays or bytes-like), and commits."""
        views = [flat_bytes(x) for x in slices]
        with self.writer(map_index, [v.nbytes for v in views]) as w:
            for p, v in enumerate(views):
                if v.nbytes:
                    w.partition(p)[:] = v
            w.commit()

    def write_frames(self, map_index, frames):
        """Writes map ``map_index``'s slices as pandas DataFrames (or any picklable objects), one per partition,
        each with ``put_object`` (columns zero-copy); needs ``layout="per_slice"``. Then commits."""
        from ..pickling import put_object
        self._check_open()
        if self.layout != "per_slice":
            raise ValueError("write_frames stores one object per slice: create the shuffle with layout='per_slice'")
        if len(frames) != self.partitions:
            raise ValueError("shuffle %s has %d partitions but %d frames were given"
                             % (self.id, self.partitions, len(frames)))
        self._check_map(map_index)
        put_owner(self, map_index)
        lengths = []
        try:
            for p, frame in enumerate(frames):
                oid = self._ids.slice(map_index, p)
                put_object(self.client, oid, frame, **KEEP)
                with self.client.get(oid, 0) as v:
                    lengths.append(v.size)
        except BaseException as e:
            for p in range(len(lengths)):
                self.client.delete(self._ids.slice(map_index, p))
            put_status(self, map_index, False, [0] * self.partitions, "could not store its frames: %s" % e)
            raise
        put_status(self, map_index, True, lengths, "")

    # ---- reduce side ------------------------------------------------------------------------------------

    def reader(self, partition, timeout=None):
        """The reader of ``partition``: waits up to ``timeout`` seconds in all (None: forever) for every map."""
        self._check_open()
        return ShuffleReader(self, partition, timeout)

    # ---- lifecycle --------------------------------------------------------------------------------------

    def close(self):
        """The owning handle deletes every object of the shuffle (also of failed and dead maps); a handle from
        ``open`` deletes nothing. Harmless twice."""
        if self._closed:
            return
        self._closed = True
        if not self.owning or self.client.closed:
            return
        for oid in self._ids.all(self.maps, self.partitions):
            self.client.delete(oid)

    def _check_open(self):
        if self._closed:
            raise ValueError("shuffle %s is closed" % self.id)

    def _check_map(self, m):
        if not 0 <= m < self.maps:
            raise IndexError("map %d is not in 0..%d of shuffle %s" % (m, self.maps - 1, self.id))

    def _metadata(self, nbytes):
        if not self.dtype:
            return b""
        from ..arrays import encode_array_metadata
        item = numpy().dtype(self.dtype).itemsize
        if nbytes % item:
            raise ValueError("a slice of %d bytes is not a whole number of %s elements" % (nbytes, self.dtype))
        return encode_array_metadata(self.dtype, (nbytes // item,))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "Shuffle(%r, %d maps x %d partitions, %s%s)" % (self.id, self.maps, self.partitions, self.layout,
                                                            ", " + self.dtype if self.dtype else "")
