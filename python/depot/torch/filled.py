"""Writing an object in ``put_object``'s format (``depot.pickling``) whose tensors are computed straight into
shared memory: a ``Planned`` tensor is pickled as an out-of-band buffer of the size it will have, the object is
created at its exact size, and each is then filled in place (``torch.stack(..., out=)``), so a batch is
written once, where it is read. ``get_object`` reads it as any other pickled object."""

import io
import pickle

from ..pickling import ALIGNMENT, ENTRY, HEADER, KIND_PICKLE_BUFFER, MAGIC
from .dtypes import dtype_name
from .samples import rebuild_tensor
from .views import tensor_over

__all__ = ["Planned", "put_filled"]


class Planned:
    """A tensor of ``dtype`` and ``shape`` to be made by ``fill(out)`` into the tensor ``out`` of shared
    memory. Pickled (only by ``put_filled``) as the tensor it will be."""

    __slots__ = ("dtype", "shape", "fill", "_order")

    def __init__(self, dtype, shape, fill):
        self.dtype = dtype
        self.shape = tuple(int(d) for d in shape)
        self.fill = fill
        self._order = None

    @property
    def nbytes(self):
        n = 1
        for d in self.shape:
            n *= d
        return n * self.dtype.itemsize

    def __reduce_ex__(self, protocol):
        if self._order is None or protocol < 5:
            raise pickle.PicklingError("a Planned tensor is pickled only by depot.torch.filled.put_filled")
        self._order.append(self)
        return rebuild_tensor, (pickle.PickleBuffer(bytearray()), dtype_name(self.dtype), self.shape)


def _align(n):
    return (n + ALIGNMENT - 1) & -ALIGNMENT


def _collect(structure, planned):
    """Pickles ``structure``; ``planned`` receives its Planned tensors in the order the stream refers to them."""
    def attach(value):
        if isinstance(value, Planned):
            value._order = planned
        elif isinstance(value, (list, tuple)):
            for v in value:
                attach(v)
        elif isinstance(value, dict):
            for v in value.values():
                attach(v)

    attach(structure)
    stream = io.BytesIO()
    out_of_band = []
    pickle.Pickler(stream, protocol=5, buffer_callback=out_of_band.append).dump(structure)
    if len(out_of_band) != len(planned):
        raise pickle.PicklingError("the structure handed %d buffers out of band but holds %d planned tensors; "
                                   "put_filled takes planned tensors and small values only"
                                   % (len(out_of_band), len(planned)))
    return stream.getbuffer()


def put_filled(client, oid, structure, metadata=b"", evict=True, keep=False):
    """Stores ``structure`` (tuples, lists, dicts of ``Planned`` tensors and small picklable values) as object
    ``oid`` in ``put_object``'s format, each Planned tensor filled in place; returns the object's size.
    A fill that raises aborts the object."""
    planned = []
    stream = _collect(structure, planned)
    stream_offset = HEADER.size + ENTRY.size * len(planned)
    end = stream_offset + len(stream)
    table = []
    for p in planned:
        start = _align(end)
        table.append(start)
        end = start + p.nbytes
    with client.create(oid, end, MAGIC + bytes(metadata), evict=evict, keep=keep) as writer:
        data = writer.data
        HEADER.pack_into(data, 0, MAGIC, len(planned), stream_offset, len(stream))
        for i, (start, p) in enumerate(zip(table, planned)):
            ENTRY.pack_into(data, HEADER.size + i * ENTRY.size, start, p.nbytes, KIND_PICKLE_BUFFER, 0)
        data[stream_offset:stream_offset + len(stream)] = stream
        for start, p in zip(table, planned):
            if p.nbytes:
                out = tensor_over(data, p.dtype, p.shape, offset=start)
                p.fill(out)
                del out
        del data
        writer.seal()
    return end
