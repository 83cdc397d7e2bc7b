"""A shuffle through a Depot store: the Python side of ``dev.depot.shuffle`` (docs/SHUFFLE.md).

``maps`` map tasks each write one slice for each of ``partitions`` reduce tasks; reduce task ``p`` reads slice
``p`` of every map in place. Tasks may run in any processes on the machine, in Python or Java: both read and
write the same objects (the ids are ``ObjectId.of`` of names derived from the shuffle id), so a shuffle of
primitive arrays written in Java is read here as NumPy arrays, and the other way round. DataFrame shuffles
(``write_frames`` / ``frames``) store each slice with ``put_object`` and are for Python readers.

    import numpy as np, depot
    from depot.shuffle import Shuffle

    with depot.connect(dir) as client, Shuffle.create(client, "job-1", maps=2, partitions=2, dtype="<f8") as s:
        s.write_map(0, [np.arange(3.0), np.arange(2.0)])     # map tasks (any process: Shuffle.open)
        s.write_map(1, [np.zeros(1), np.ones(4)])
        parts = s.reader(0, timeout=60).arrays()             # reduce task 0: one read-only array per map
    # leaving the block deletes every object of the shuffle

A map that fails (``ShuffleWriter.fail``, a writer closed without commit) or whose process dies makes readers
raise ``MapFailedError`` naming the map; a map that does not commit in time is a ``MapTimeoutError``.
"""

import collections
import os
import struct
import time

from ._layout import ManifestDescriptor as MD
from ._layout import MapStatusDescriptor as MS
from ._records import record_struct
from ._waiting import seconds_left
from .errors import DepotError, ObjectMissingError
from .ids import ObjectId

__all__ = ["AbandonedShuffle", "LAYOUT_PER_MAP", "LAYOUT_PER_SLICE", "MapFailedError", "MapTimeoutError", "Shuffle",
           "ShuffleReader", "ShuffleWriter", "find_abandoned", "partition_array", "process_identity",
           "sweep_abandoned"]

# ---- records shared with Java: dev.depot.shuffle.ManifestDescriptor and MapStatusDescriptor (_layout) ---------

#: manifest: magic "DSH1", u16 version, u8 layout, u8 dtype length, u32 maps, u32 partitions, u64 creator,
#: 32 bytes dtype; its object's metadata is the shuffle id in UTF-8 (how a sweep names the other objects)
MANIFEST = record_struct(MD.LENGTH, (MD.MAGIC_OFFSET, "I"), (MD.VERSION_OFFSET, "H"), (MD.LAYOUT_OFFSET, "B"),
                         (MD.DTYPE_LENGTH_OFFSET, "B"), (MD.MAPS_OFFSET, "I"), (MD.PARTITIONS_OFFSET, "I"),
                         (MD.CREATOR_OFFSET, "Q"), (MD.DTYPE_OFFSET, "%ds" % MD.MAX_DTYPE_LENGTH))
LAYOUT_PER_SLICE = MD.LAYOUT_PER_SLICE
LAYOUT_PER_MAP = MD.LAYOUT_PER_MAP
MAX_DTYPE_LENGTH = MD.MAX_DTYPE_LENGTH
#: owner record: u64 identity of the writing process
OWNER = record_struct(MS.OWNER_LENGTH, (MS.OWNER_IDENTITY_OFFSET, "Q"))
#: status record head: magic "DSM1", u32 state, u64 writer, u32 map, u32 partitions; then P x u64 lengths,
#: u32 message length, message
STATUS_HEAD = record_struct(MS.LENGTHS_OFFSET, (MS.MAGIC_OFFSET, "I"), (MS.STATE_OFFSET, "I"),
                            (MS.WRITER_OFFSET, "Q"), (MS.MAP_OFFSET, "I"), (MS.PARTITIONS_OFFSET, "I"))
MAX_MESSAGE_LENGTH = MS.MAX_MESSAGE_LENGTH
_MESSAGE_LENGTH = struct.Struct("<I")


def _slice_lengths(partitions):
    """The status record's slice lengths, one u64 per partition from ``LENGTHS_OFFSET``."""
    return struct.Struct("<%dQ" % partitions)


def _message_length_offset(partitions):
    """Where a status record's message length lies: after its slice lengths (Java's messageLengthOffset)."""
    return MS.LENGTHS_OFFSET + _slice_lengths(partitions).size
#: how often a reader waiting for a map checks that the map's process still lives (seconds)
LIVENESS_CHECK = 0.1

_LAYOUT_NAMES = {"per_slice": LAYOUT_PER_SLICE, "per_map": LAYOUT_PER_MAP}


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


def process_identity(pid=None):
    """The identity Depot gives a process: ``pid << 32 | start time in clock ticks & 0xffffffff`` (as
    ``dev.depot.core.sys.ProcessIdentity``), or 0 when it does not exist or is a zombie."""
    pid = os.getpid() if pid is None else pid
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            stat = f.read().decode("latin-1")
    except OSError:
        return 0
    fields = stat[stat.rindex(")") + 2:].split(" ")
    if len(fields) < 20 or fields[0] in ("Z", "X"):
        return 0
    return (pid << 32) | (int(fields[19]) & 0xFFFFFFFF)


def _alive(identity):
    return identity != 0 and process_identity(identity >> 32) == identity


def _numpy():
    try:
        import numpy
    except ImportError:
        raise ImportError("depot.shuffle's arrays need NumPy: pip install 'depot-shm[numpy]'") from None
    return numpy


#: the longest shuffle id, in characters (UTF-16 code units in Java, where the limit is checked too)
MAX_ID_LENGTH = 200


class _Ids:
    def __init__(self, shuffle_id):
        if not 1 <= _java_length(shuffle_id) <= MAX_ID_LENGTH:
            raise ValueError("a shuffle id has 1..%d characters, got %d" % (MAX_ID_LENGTH, _java_length(shuffle_id)))
        self.base = "depot-shuffle/%s/" % shuffle_id

    def manifest(self):
        return ObjectId.of(self.base + "manifest")

    def owner(self, m):
        return ObjectId.of(self.base + "map/%d/owner" % m)

    def status(self, m):
        return ObjectId.of(self.base + "map/%d/status" % m)

    def map_data(self, m):
        return ObjectId.of(self.base + "map/%d/data" % m)

    def slice(self, m, p):
        return ObjectId.of(self.base + "map/%d/part/%d" % (m, p))

    def all(self, maps, partitions):
        """Every object a shuffle of this size may have made, in either layout; the manifest last."""
        out = []
        for m in range(maps):
            out += [self.status(m), self.map_data(m)] + [self.slice(m, p) for p in range(partitions)] \
                + [self.owner(m)]
        return out + [self.manifest()]


def _java_length(text):
    """The length Java gives ``text`` (UTF-16 code units), so both languages accept the same ids."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _decode_manifest(data, shuffle_id, what):
    """``(layout name, dtype, maps, partitions, creator)`` of a manifest; raises DepotError naming ``what``."""
    if len(data) < MANIFEST.size or MANIFEST.unpack_from(data)[0] != MD.MAGIC:
        raise DepotError("object %s (%d bytes) is not the manifest of a shuffle (magic DSH1, %d bytes)"
                         % (what, len(data), MANIFEST.size))
    magic, version, layout, n, maps, partitions, creator, raw = MANIFEST.unpack_from(data)
    if version != MD.VERSION or layout not in (LAYOUT_PER_MAP, LAYOUT_PER_SLICE) \
            or maps <= 0 or partitions <= 0 or n > MAX_DTYPE_LENGTH:
        raise DepotError("the manifest of shuffle %s is not one this version reads: version %d (expected %d), "
                         "layout %d, %d maps, %d partitions, dtype length %d"
                         % (shuffle_id, version, MD.VERSION, layout, maps, partitions, n))
    name = "per_map" if layout == LAYOUT_PER_MAP else "per_slice"
    return name, raw[:n].decode("ascii"), maps, partitions, creator


def _encode_status(map_index, committed, lengths, message):
    text = message.encode("utf-8")[:MAX_MESSAGE_LENGTH]
    return (STATUS_HEAD.pack(MS.MAGIC, MS.STATE_COMMITTED if committed else MS.STATE_FAILED, process_identity(),
                             map_index, len(lengths))
            + _slice_lengths(len(lengths)).pack(*lengths) + _MESSAGE_LENGTH.pack(len(text)) + text)


def _decode_status(data, map_index, partitions):
    data = bytes(data)
    if len(data) < STATUS_HEAD.size:
        raise DepotError("the status record of map %d (%d bytes) is not a shuffle status record" % (map_index, len(data)))
    magic, state, writer, m, p = STATUS_HEAD.unpack_from(data)
    need = _message_length_offset(partitions) + _MESSAGE_LENGTH.size
    if magic != MS.MAGIC or m != map_index or p != partitions or len(data) < need \
            or state not in (MS.STATE_COMMITTED, MS.STATE_FAILED):
        raise DepotError("the status record of map %d is inconsistent: magic %r, map %d, %d partitions (expected %d),"
                         " state %d, %d bytes" % (map_index, data[:4], m, p, partitions, state, len(data)))
    lengths = _slice_lengths(partitions).unpack_from(data, MS.LENGTHS_OFFSET)
    (n,) = _MESSAGE_LENGTH.unpack_from(data, _message_length_offset(partitions))
    if need + n > len(data):
        raise DepotError("the status record of map %d has a message of %d bytes but only %d follow"
                         % (map_index, n, len(data) - need))
    return state == MS.STATE_COMMITTED, writer, lengths, data[need:need + n].decode("utf-8", "replace")


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
        self._ids = _Ids(shuffle_id)
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
            dtype = _numpy().dtype(dtype).str
        if len(dtype) > MAX_DTYPE_LENGTH:
            raise ValueError("dtype %r is longer than %d" % (dtype, MAX_DTYPE_LENGTH))
        s = cls(client, shuffle_id, maps, partitions, layout, dtype, True)
        sweep_abandoned(client)
        raw = dtype.encode("ascii")
        record = MANIFEST.pack(MD.MAGIC, MD.VERSION, _LAYOUT_NAMES[layout], len(raw), maps, partitions,
                               process_identity(), raw.ljust(MAX_DTYPE_LENGTH, b"\0"))
        client.put(s._ids.manifest(), record, metadata=shuffle_id.encode("utf-8"), **_KEEP)
        return s

    @classmethod
    def open(cls, client, shuffle_id, timeout=None):
        """Opens a shuffle another process created, waiting up to ``timeout`` seconds for its manifest."""
        ids = _Ids(shuffle_id)
        with client.get(ids.manifest(), timeout) as view:
            data = bytes(view.data)
        layout, dtype, maps, partitions, _ = _decode_manifest(data, shuffle_id, ids.manifest())
        return cls(client, shuffle_id, maps, partitions, layout, dtype, False)

    # ---- map side ---------------------------------------------------------------------------------------

    def writer(self, map_index, sizes):
        """The writer of map ``map_index``, with the byte length of each of its slices."""
        self._check_open()
        return ShuffleWriter(self, map_index, [int(x) for x in sizes])

    def write_map(self, map_index, slices):
        """Writes map ``map_index``'s slices, one per partition (NumPy arrays or bytes-like), and commits."""
        views = [_flat_bytes(x) for x in slices]
        with self.writer(map_index, [v.nbytes for v in views]) as w:
            for p, v in enumerate(views):
                if v.nbytes:
                    w.partition(p)[:] = v
            w.commit()

    def write_frames(self, map_index, frames):
        """Writes map ``map_index``'s slices as pandas DataFrames (or any picklable objects), one per partition,
        each with ``put_object`` (columns zero-copy); needs ``layout="per_slice"``. Then commits."""
        from .pickling import put_object
        self._check_open()
        if self.layout != "per_slice":
            raise ValueError("write_frames stores one object per slice: create the shuffle with layout='per_slice'")
        if len(frames) != self.partitions:
            raise ValueError("shuffle %s has %d partitions but %d frames were given"
                             % (self.id, self.partitions, len(frames)))
        self._check_map(map_index)
        _put_owner(self, map_index)
        lengths = []
        try:
            for p, frame in enumerate(frames):
                oid = self._ids.slice(map_index, p)
                put_object(self.client, oid, frame, **_KEEP)
                with self.client.get(oid, 0) as v:
                    lengths.append(v.size)
        except BaseException as e:
            for p in range(len(lengths)):
                self.client.delete(self._ids.slice(map_index, p))
            _put_status(self, map_index, False, [0] * self.partitions, "could not store its frames: %s" % e)
            raise
        _put_status(self, map_index, True, lengths, "")

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
        from .arrays import encode_array_metadata
        item = _numpy().dtype(self.dtype).itemsize
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


class AbandonedShuffle(collections.namedtuple("AbandonedShuffle", "id creator_pid objects bytes")):
    """A shuffle whose creator died without closing it: its id, the pid the creator had, and how many objects
    (and data bytes) of it the store held when it was found (Java's ``dev.depot.shuffle.AbandonedShuffle``)."""

    __slots__ = ()


def find_abandoned(client):
    """The shuffles ``sweep_abandoned`` would delete now, as ``AbandonedShuffle``; deletes nothing."""
    return [found for found, _ in _find_abandoned(client)]


def sweep_abandoned(client):
    """Deletes the shuffles whose creator died without closing them, as their creator's ``close()`` would, and
    returns them as ``AbandonedShuffle`` (as Java's ``Shuffle.sweepAbandoned``; ``Shuffle.create`` does it first
    in both languages).

    Shuffle objects are kept (never evicted), so nothing else would free them. A manifest is found by its size,
    magic and metadata (the shuffle id, trusted only when it hashes to the manifest's own id); its shuffle is
    abandoned when the creator it names (pid and start time) is gone and no map is still being written by a live
    process (an owner record alive without a status record). Older manifests without a name are left alone, and
    so is a spilled manifest while no daemon can restore it. Harmless twice or in two processes at once: a delete
    another sweep is doing is left to it."""
    swept = []
    for found, objects in _find_abandoned(client):
        for each in objects:
            try:
                client.delete(each)
            except DepotError:
                pass  # being deleted by another sweep, or still being written by a process not reaped yet
        swept.append(found)
    return swept


#: how long a sweep waits for a spilled manifest to come back from disk (seconds)
_RESTORE_TIMEOUT = 10.0


def _find_abandoned(client):
    """``(AbandonedShuffle, ids of all its possible objects)`` of every abandoned shuffle in the store."""
    listing = client.list()
    by_id = {info.id: info for info in listing}
    out = []
    for info in listing:
        if info.data_size != MANIFEST.size or not 0 < info.metadata_size <= 3 * MAX_ID_LENGTH \
                or info.state not in ("sealed", "spilled"):
            continue
        found = _abandoned(client, info.id, by_id)
        if found is not None:
            out.append(found)
    return out


def _abandoned(client, oid, listing):
    """``(AbandonedShuffle, object ids)`` of the shuffle whose manifest is ``oid`` when it is abandoned, else
    None; ``listing`` (id to ``ObjectInfo``) gives the sizes of its objects."""
    try:
        with client.get(oid, _RESTORE_TIMEOUT) as view:
            data, metadata = bytes(view.data), bytes(view.metadata)
    except DepotError:
        return None  # gone meanwhile, or spilled with no daemon to restore it: not examined this time
    try:
        shuffle_id = metadata.decode("utf-8")
        ids = _Ids(shuffle_id)
    except ValueError:  # not UTF-8, or not a valid shuffle id
        return None
    if ids.manifest() != oid:
        return None  # an object that only looks like a manifest
    try:
        _, _, maps, partitions, creator = _decode_manifest(data, shuffle_id, oid)
    except DepotError:
        return None  # a manifest of another version: its objects cannot be named here
    if creator == 0 or _alive(creator):
        return None
    for m in range(maps):
        owner = _owner_identity(client, ids, m)
        if _alive(owner) and not client.contains(ids.status(m)):
            return None  # map m is still being written
    objects = ids.all(maps, partitions)
    present = [listing[each] for each in objects if each in listing]
    return AbandonedShuffle(shuffle_id, creator >> 32, len(present), sum(i.data_size for i in present)), objects


#: how every shuffle object is created, the one place that decides it: kept (never evicted; a daemon with a
#: spill directory spills it under pressure and a get restores it)
_KEEP = {"evict": False, "keep": True}


def _flat_bytes(x):
    view = memoryview(x)
    if not view.c_contiguous:
        view = memoryview(view.tobytes())
    return view.cast("B") if view.format != "B" or view.ndim != 1 else view


def _owner_identity(client, ids, m):
    """The identity of the process writing map ``m`` (its owner record), or 0 when no writer opened it or the
    record is too short to hold one."""
    try:
        with client.get(ids.owner(m), 0) as view:
            record = bytes(view.data)
    except ObjectMissingError:
        return 0
    return OWNER.unpack_from(record)[0] if len(record) >= OWNER.size else 0


def _put_owner(shuffle, m):
    from .errors import ObjectExistsError
    try:
        shuffle.client.put(shuffle._ids.owner(m), OWNER.pack(process_identity()), **_KEEP)
    except ObjectExistsError:
        raise ValueError("map %d of shuffle %s already has a writer; a map is written once" % (m, shuffle.id)) from None


def _put_status(shuffle, m, committed, lengths, message):
    shuffle.client.put(shuffle._ids.status(m), _encode_status(m, committed, lengths, message), **_KEEP)


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
        _put_owner(shuffle, map_index)
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
        w = self.shuffle.client.create(oid, size, self.shuffle._metadata(size), **_KEEP)
        self._objects.append(w)
        return w.data

    def partition(self, p):
        """The writable slice of partition ``p`` (a ``memoryview``; empty for an empty slice)."""
        self._check_open()
        return self._slices[p]

    def array(self, p):
        """The slice of partition ``p`` as a writable NumPy array of the shuffle's dtype."""
        np = _numpy()
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
            _put_status(self.shuffle, self.map, True, self.sizes, "")
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
        _put_status(self.shuffle, self.map, False, self.sizes, reason)

    def _check_open(self):
        if self._state != "open":
            raise ValueError("the writer of map %d is %s" % (self.map, self._state))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.fail("its writer was closed without commit" if exc[0] is None else "%s: %s" % (exc[0].__name__, exc[1]))


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
                committed, writer, lengths, message = _decode_status(view.data, m, shuffle.partitions)
        except ObjectMissingError:
            pass
        else:
            if not committed:
                raise MapFailedError("map %d of shuffle %s failed in pid %d: %s" % (m, shuffle.id, writer >> 32,
                                                                                   message), m)
            return lengths
        owner = _owner_identity(client, ids, m)
        if owner and not _alive(owner):
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
        np = _numpy()
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
        np = _numpy()
        parts = self.arrays(dtype)
        return np.concatenate(parts) if parts else np.empty(0, dtype=dtype or self.shuffle.dtype)

    def frames(self):
        """The objects ``write_frames`` stored for this partition, one per map (DataFrames: columns zero-copy)."""
        from .pickling import get_object
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


def partition_array(array, splitters):
    """Splits ``array`` by sorted ``splitters`` into ``len(splitters) + 1`` arrays: partition ``i`` holds the
    values ``v`` with ``splitters[i-1] <= v < splitters[i]`` in NumPy's sort order (NaN last), in input order."""
    np = _numpy()
    index = np.searchsorted(splitters, array, side="right")
    return [array[index == p] for p in range(len(splitters) + 1)]
