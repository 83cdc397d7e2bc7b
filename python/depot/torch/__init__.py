"""Depot for PyTorch data loading (docs/TORCH.md).

- ``put_tensor`` / ``get_tensor``: CPU tensors as Depot objects in the array format NumPy and Java read; a get
  is a zero-copy view that holds its pin while it lives (``depot.torch.views`` says what torch's warning about
  non-writable buffers means for it).
- ``SharedCache``: a map-style Dataset whose samples, decoded once by any worker of any process on the node,
  every other worker, process and epoch reads zero-copy.
- ``BatchLoader`` (with ``BatchWriter``, its ``collate_fn``): DataLoader workers collate each batch straight
  into Depot and hand the trainer only its id.
- ``DaskArrayDataset``: the rows of a Dask array persisted on ``depot.dask.Scheduler``, as tensors, no copy.

Needs PyTorch (``pip install 'depot-shm[torch]'``); importing this package without it raises ImportError.
"""

from ._import import torch_module

torch_module()

from .batches import BatchLoader, BatchRef, BatchWriter, read_batch  # noqa: E402
from .cache import SharedCache  # noqa: E402
from .dask_arrays import DaskArrayDataset  # noqa: E402
from .tensors import get_tensor, put_tensor  # noqa: E402

__all__ = ["BatchLoader", "BatchRef", "BatchWriter", "DaskArrayDataset", "SharedCache", "get_tensor",
           "put_tensor", "read_batch"]
