"""Any picklable Python object as a Depot object, with its large buffers zero-copy (docs/PROTOCOL.md,
"Pickled objects").

``put_object`` pickles with protocol 5. Buffers that pickle hands out of band (NumPy arrays and so pandas
columns, pyarrow buffers) and ``bytes``/``bytearray``/``memoryview`` values of at least
``INLINE_LIMIT`` bytes are not copied into the pickle stream: their sizes are summed first, the object is
created once at its exact size, and each buffer is copied once, straight into shared memory, 64-byte aligned.

``get_object`` unpickles with every out-of-band buffer a read-only ``memoryview`` of shared memory, so
NumPy arrays, pandas columns and pyarrow buffers come back without a copy. The object stays pinned while any
of them is alive and is released once the last is garbage-collected. (``bytes`` and ``bytearray`` values own
their memory in Python, so they come back as copies; ``memoryview`` values come back as views.)

The object's data, little-endian::

    0        4 bytes     magic b"DPK1"
    4        u32         n: number of buffers
    8        u64         offset of the pickle stream (from the start of the data)
    16       u64         length of the pickle stream
    24       n x 24      the buffer table: u64 offset, u64 length, u32 kind, u32 zero
    ...                  the pickle stream
    ...                  the buffers, each at a 64-byte aligned offset

Kinds: 0 a protocol-5 out-of-band buffer (consumed in order by the stream's NEXT_BUFFER opcodes), 1 bytes,
2 bytearray, 3 memoryview (these three referenced by the stream as persistent id = table index). The
object's metadata is ``b"DPK1"`` followed by the application's own metadata.
"""

import io
import pickle
import struct

from .errors import DepotError

__all__ = ["ObjectFormatError", "get_object", "is_object_metadata", "object_size", "put_object", "read_layout",
           "Layout", "INLINE_LIMIT", "MAGIC"]

MAGIC = b"DPK1"
HEADER = struct.Struct("<4sIQQ")
ENTRY = struct.Struct("<QQII")
ALIGNMENT = 64
#: bytes/bytearray values shorter than this stay inside the pickle stream
INLINE_LIMIT = 1024
#: at most this many buffers in one object (the table must stay a small part of the data)
MAX_BUFFERS = 1 << 24

KIND_PICKLE_BUFFER = 0
KIND_BYTES = 1
KIND_BYTEARRAY = 2
KIND_MEMORYVIEW = 3
_KIND_BY_TYPE = {bytes: KIND_BYTES, bytearray: KIND_BYTEARRAY, memoryview: KIND_MEMORYVIEW}
KIND_NAMES = ("pickle-buffer", "bytes", "bytearray", "memoryview")


class ObjectFormatError(DepotError, ValueError):
    """An object is not a well-formed pickled object (not written by ``put_object``, or damaged)."""


def is_object_metadata(metadata):
    """True when ``metadata`` marks an object written by ``put_object``."""
    return bytes(metadata[:len(MAGIC)]) == MAGIC


def _align(n):
    return (n + ALIGNMENT - 1) & -ALIGNMENT


def _as_bytes_view(value):
    """A flat unsigned-byte view of ``value`` without a copy when it is contiguous, else a copy."""
    view = memoryview(value)
    if not view.contiguous:
        return memoryview(view.tobytes())
    return view if view.format == "B" and view.ndim == 1 else view.cast("B")


class _Collector:
    """Pickles ``obj`` and keeps its large buffers aside, in the order the stream refers to them."""

    def __init__(self, obj):
        self.buffers = []  # (kind, flat byte memoryview)
        self._persisted = {}  # id(value) -> table index, so a value met twice is stored once
        self._keep = []  # the values behind _persisted, alive until the copy is done
        stream = io.BytesIO()
        pickler = pickle.Pickler(stream, protocol=5, buffer_callback=self._out_of_band)
        pickler.persistent_id = self._persistent_id
        pickler.dump(obj)
        self.stream = stream.getbuffer()

    def _out_of_band(self, pickle_buffer):
        try:
            raw = pickle_buffer.raw()
        except BufferError:
            return True  # not contiguous: pickle copies it into the stream instead
        self.buffers.append((KIND_PICKLE_BUFFER, raw))
        return None

    def _persistent_id(self, value):
        kind = _KIND_BY_TYPE.get(type(value))
        if kind is None or (kind != KIND_MEMORYVIEW and len(value) < INLINE_LIMIT):
            return None
        index = self._persisted.get(id(value))
        if index is None:
            index = len(self.buffers)
            self._persisted[id(value)] = index
            self._keep.append(value)
            self.buffers.append((kind, _as_bytes_view(value)))
        return index


def _plan(collected):
    """``(stream offset, [(offset, length, kind)] of the buffers, data size)`` of a collected object."""
    buffers = collected.buffers
    if len(buffers) > MAX_BUFFERS:
        raise ValueError("object has %d out-of-band buffers; at most %d" % (len(buffers), MAX_BUFFERS))
    stream_offset = HEADER.size + ENTRY.size * len(buffers)
    end = stream_offset + len(collected.stream)
    table = []
    for kind, raw in buffers:
        start = _align(end)
        table.append((start, raw.nbytes, kind))
        end = start + raw.nbytes
    return stream_offset, table, end


def object_size(obj):
    """The data size in bytes of the object ``put_object`` would store for ``obj`` (pickles it, copies no
    large buffer)."""
    return _plan(_Collector(obj))[2]


def put_object(client, oid, obj, metadata=b"", evict=True, keep=False, timeout=0):
    """Stores ``obj`` (anything picklable) as object ``oid``; see the module's docstring for what is
    zero-copy; ``evict``, ``keep`` and ``timeout`` as for ``Client.create``. Raises whatever pickling raises
    for an object that cannot be pickled, before creating anything."""
    collected = _Collector(obj)
    buffers = collected.buffers
    stream_offset, table, end = _plan(collected)
    with client.create(oid, end, MAGIC + bytes(metadata), evict, keep, timeout) as writer:
        data = writer.data
        HEADER.pack_into(data, 0, MAGIC, len(buffers), stream_offset, len(collected.stream))
        for i, (start, length, kind) in enumerate(table):
            ENTRY.pack_into(data, HEADER.size + i * ENTRY.size, start, length, kind, 0)
        data[stream_offset:stream_offset + len(collected.stream)] = collected.stream
        for (start, length, _), (_, raw) in zip(table, buffers):
            data[start:start + length] = raw
        del data
        writer.seal()


class Layout:
    """The parsed header of a pickled object: ``stream`` (offset, length) and ``buffers``, a list of
    (offset, length, kind), every one checked to lie inside the data."""

    __slots__ = ("stream", "buffers")

    def __init__(self, stream, buffers):
        self.stream = stream
        self.buffers = buffers


def read_layout(data, name="object"):
    """Parses and bounds-checks the header of a pickled object's ``data`` (a buffer)."""
    size = len(data)
    if size < HEADER.size:
        raise ObjectFormatError("%s has %d bytes, fewer than the %d of a pickled object's header"
                                % (name, size, HEADER.size))
    magic, count, stream_offset, stream_length = HEADER.unpack_from(data, 0)
    if magic != MAGIC:
        raise ObjectFormatError("%s's data starts with %r, not the pickled-object magic %r" % (name, magic, MAGIC))
    table_end = HEADER.size + count * ENTRY.size
    if count > MAX_BUFFERS or table_end > size:
        raise ObjectFormatError("%s says it has %d buffers; their table does not fit in its %d bytes"
                                % (name, count, size))

    if stream_offset < table_end or stream_length > size or stream_offset > size - stream_length:
        _outside(name, "the pickle stream", stream_offset, stream_length, table_end, size)
    buffers = []
    at = HEADER.size
    for i in range(count):
        offset, length, kind, _ = ENTRY.unpack_from(data, at)
        at += ENTRY.size
        if offset < table_end or length > size or offset > size - length:
            _outside(name, "buffer %d" % i, offset, length, table_end, size)
        if kind >= len(KIND_NAMES):
            raise ObjectFormatError("%s: buffer %d has kind %d; known kinds are 0..%d"
                                    % (name, i, kind, len(KIND_NAMES) - 1))
        buffers.append((offset, length, kind))
    return Layout((stream_offset, stream_length), buffers)


def _outside(name, what, offset, length, table_end, size):
    raise ObjectFormatError("%s: %s at %d..%d lies outside the data %d..%d"
                            % (name, what, offset, offset + length, table_end, size))


class _Unpickler(pickle.Unpickler):
    def __init__(self, stream, views, layout, name):
        self._views = views
        self._layout = layout
        self._name = name
        self._loaded = {}  # table index -> value, so a value stored once and met twice is one value again
        super().__init__(io.BytesIO(stream), buffers=[v for v, (_, _, k) in zip(views, layout.buffers)
                                          if k == KIND_PICKLE_BUFFER])

    def persistent_load(self, pid):
        if not isinstance(pid, int) or not 0 <= pid < len(self._views):
            raise ObjectFormatError("%s: the pickle stream refers to buffer %r of %d"
                                    % (self._name, pid, len(self._views)))
        value = self._loaded.get(pid)
        if value is None:
            value = self._loaded[pid] = self._value(pid)
        return value

    def _value(self, pid):
        kind = self._layout.buffers[pid][2]
        view = self._views[pid]
        if kind == KIND_BYTES:
            return bytes(view)
        if kind == KIND_BYTEARRAY:
            return bytearray(view)
        if kind == KIND_MEMORYVIEW:
            return view
        raise ObjectFormatError("%s: the pickle stream names buffer %d, which is an out-of-band pickle buffer"
                                % (self._name, pid))


class _Name:
    """``object ID`` (from the raw id) for messages, spelled only when one is raised."""

    __slots__ = ("oid",)

    def __init__(self, oid):
        self.oid = oid

    def __str__(self):
        from .ids import ObjectId
        return "object %s" % ObjectId(self.oid)


def get_object(client, oid, timeout=None):
    """The object stored by ``put_object`` under ``oid``, waiting up to ``timeout`` seconds for it (None:
    forever). Its out-of-band buffers are read-only views of shared memory; the object stays pinned until
    the last of them is garbage-collected. Raises ObjectMissingError, ObjectFormatError."""
    # No ObjectView (as get_array): the pin belongs to the exporter of the buffers made below, and ends with the
    # last of them.
    raw, located, mapping = client._locate(oid, timeout)
    pin = located.pin
    name = _Name(raw)
    try:
        metadata = located.metadata
        if metadata is None:
            metadata = mapping.read(located.metadata_offset, located.metadata_length)
        if not is_object_metadata(metadata):
            raise ObjectFormatError("%s was not written by put_object (its metadata does not start with %r); "
                                    "read it with get or get_array" % (name, MAGIC))
        memory = mapping.span(located.data_offset, located.size, pin, True)
        layout = read_layout(memory, name)
    except BaseException:
        pin.release()
        raise
    del pin, located
    if not layout.buffers:
        start, length = layout.stream
        return _Unpickler(memory[start:start + length], [], layout, name).load()  # the stream is copied
    views = [memory[offset:offset + length] for offset, length, _ in layout.buffers]
    start, length = layout.stream
    stream = memory[start:start + length]
    del memory
    try:
        for _, _, kind in layout.buffers:
            if kind != KIND_PICKLE_BUFFER:
                break
        else:
            # No value stored by table index, so no persistent id to resolve: the C unpickler alone.
            try:
                return pickle.loads(stream, buffers=views)
            except pickle.UnpicklingError as e:
                raise ObjectFormatError("%s: its pickle stream cannot be read: %s" % (name, e)) from None
        return _Unpickler(stream, views, layout, name).load()
    finally:
        stream.release()
