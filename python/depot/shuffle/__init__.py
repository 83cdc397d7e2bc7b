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

The modules of the package: ``_shuffle`` (the handle), ``_writer`` (the map side), ``_reader`` (the reduce side
and its errors), ``_abandoned`` (sweeping shuffles whose creator died), ``_maps`` (owner and status records, the
liveness of their processes), ``_records`` (the records shared with Java), ``_ids`` (object ids), ``_arrays``
(NumPy).
"""

from ._abandoned import AbandonedShuffle, find_abandoned, sweep_abandoned
from ._arrays import partition_array
from ._ids import MAX_ID_LENGTH  # noqa: F401
from ._maps import process_identity
from ._reader import LIVENESS_CHECK, MapFailedError, MapTimeoutError, ShuffleReader  # noqa: F401
from ._records import (LAYOUT_PER_MAP, LAYOUT_PER_SLICE, MANIFEST, MAX_DTYPE_LENGTH, MAX_MESSAGE_LENGTH,  # noqa: F401
                       OWNER, STATUS_HEAD)
from ._shuffle import Shuffle
from ._writer import ShuffleWriter

__all__ = ["AbandonedShuffle", "LAYOUT_PER_MAP", "LAYOUT_PER_SLICE", "MapFailedError", "MapTimeoutError", "Shuffle",
           "ShuffleReader", "ShuffleWriter", "find_abandoned", "partition_array", "process_identity",
           "sweep_abandoned"]
