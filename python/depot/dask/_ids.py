"""The layout of the ids of objects that one worker process writes for others to read (worker results of
``depot.dask.distributed``, slices of the DataFrame shuffle): the writer's pid and start time come first, so
that the objects of a writer that died can be found and deleted (``distributed.data.sweep_dead_writers``).

    magic "DdW1" (4) | writer pid (4) | writer start ticks, low 32 bits (4) | hash (8)
"""

import struct

from .. import _process
from .._layout import WriterIdDescriptor as D

RESULT_ID_MAGIC = b"DdW1"
RESULT_ID_LAYOUT = struct.Struct(">4sII8s")
# The fields lie where Java's WriterIdDescriptor (depot doctor) reads them.
assert (struct.calcsize(">4s"), struct.calcsize(">4sI"), struct.calcsize(">4sII"), RESULT_ID_LAYOUT.size) == (
    D.PID_OFFSET, D.START_TICKS_OFFSET, D.HASH_OFFSET, D.LENGTH)


def writer_prefix(identity=None):
    """The first 12 bytes (magic, pid, start ticks) of the ids written by the process of ``identity`` (default:
    this one's, as ``_process.identity()`` packs it)."""
    identity = _process.identity() if identity is None else identity
    return RESULT_ID_LAYOUT.pack(RESULT_ID_MAGIC, identity >> 32, identity & 0xFFFFFFFF, b"")[:12]
