"""The rows of a Dask array persisted on ``depot.dask.Scheduler`` as a map-style Dataset of tensors, no copy.

``(x).persist(scheduler=s)`` leaves each chunk a NumPy array over the Depot object that holds it. The dataset
keeps those arrays (and with them their pins) and makes each sample a tensor over its row: the one copy in
shared memory is what the DataLoader's workers read (they inherit the mapping when they fork, the default on
Linux; a worker started with ``spawn`` or ``forkserver`` would receive a pickled copy of the chunks).
"""

import bisect

from ._import import torch_module
from .views import tensor_of_array
from ._workers import settle_worker

__all__ = ["DaskArrayDataset"]


class DaskArrayDataset(torch_module().utils.data.Dataset):
    """Sample ``i`` is row ``i`` of ``array`` (along its first axis) as a read-only tensor view.

    Parameters
    ----------
    array : dask.array.Array
        Persisted (``array.persist(scheduler=depot_scheduler)``), chunked along the first axis only (one chunk
        across every other axis: ``array.rechunk({1: -1, ...})`` before persisting). An array that is not
        persisted is computed here, with ``scheduler``.
    labels : dask.array.Array or sequence, optional
        One label per row; then a sample is ``(row, label)``. A Dask array is handled as ``array`` is.
    scheduler : optional
        Computes what is not persisted (default Dask's synchronous scheduler, which hands a persisted chunk out
        as it is).

    Examples
    --------
    >>> x = (raw / 255).astype("float32").persist(scheduler=s)                # doctest: +SKIP
    >>> loader = DataLoader(DaskArrayDataset(x), batch_size=64, num_workers=2)  # doctest: +SKIP
    """

    def __init__(self, array, labels=None, scheduler="sync"):
        self.blocks, self.starts = _row_blocks(array, scheduler)
        self.length = self.starts[-1]
        self.labels = None
        if labels is not None:
            if hasattr(labels, "dask"):
                blocks, starts = _row_blocks(labels, scheduler)
                labels = _Rows(blocks, starts)
            if len(labels) != self.length:
                raise ValueError("%d labels for %d rows" % (len(labels), self.length))
            self.labels = labels

    def __len__(self):
        return self.length

    def __getitem__(self, index):
        settle_worker()
        i = int(index)
        if i < 0:
            i += self.length
        if not 0 <= i < self.length:
            raise IndexError("row %d of %d" % (index, self.length))
        b = bisect.bisect_right(self.starts, i) - 1
        row = tensor_of_array(self.blocks[b][i - self.starts[b]])
        if self.labels is None:
            return row
        label = self.labels[i]
        return row, (label.item() if hasattr(label, "item") and getattr(label, "ndim", 1) == 0 else label)


class _Rows:
    """Rows of NumPy blocks, indexed as one sequence."""

    def __init__(self, blocks, starts):
        self.blocks = blocks
        self.starts = starts

    def __len__(self):
        return self.starts[-1]

    def __getitem__(self, i):
        b = bisect.bisect_right(self.starts, i) - 1
        return self.blocks[b][i - self.starts[b]]


def _row_blocks(array, scheduler):
    """``(blocks, starts)``: the array's chunks along its first axis as NumPy arrays, and each one's first
    row, followed by the number of rows."""
    import dask
    if array.ndim == 0:
        raise ValueError("a DaskArrayDataset needs an array of at least one dimension")
    if any(len(c) != 1 for c in array.chunks[1:]):
        raise ValueError("the array has chunks %s: chunk it along the first axis only (array.rechunk({%s})) "
                         "before persisting" % (array.chunks, ", ".join("%d: -1" % a for a in range(1, array.ndim))))
    delayed = array.to_delayed().reshape(-1)
    blocks = list(dask.compute(*delayed, scheduler=scheduler))
    starts = [0]
    for n in array.chunks[0]:
        starts.append(starts[-1] + n)
    return blocks, starts
