"""Dask on Depot: a scheduler whose worker processes pass results by id, ``share`` for put-once inputs, and a
cache that every process on the node shares. See docs/DASK.md.

    import depot.dask
    with depot.dask.Scheduler(workers=4) as s:
        result = collection.compute(scheduler=s)
"""

try:
    import dask  # noqa: F401
except ImportError:  # pragma: no cover - depends on the environment
    raise ImportError("depot.dask needs Dask: pip install 'depot-shm[dask]' (or dask[array,dataframe])") from None

import sys as _sys

from ._pool import WorkerDiedError, WorkerStartError, WorkerTaskError
from ._worker import InputLostError
from .cache import Cache
from .scheduler import RemoteTraceback, Scheduler
from .shared import Shared, share

if "dask.dataframe" in _sys.modules:  # DataFrames in use: add the "depot" shuffle (else: import depot.dask.dataframe)
    from . import dataframe as _dataframe  # noqa: F401

__all__ = ["Cache", "InputLostError", "RemoteTraceback", "Scheduler", "Shared", "WorkerDiedError", "WorkerStartError",
           "WorkerTaskError", "share"]
