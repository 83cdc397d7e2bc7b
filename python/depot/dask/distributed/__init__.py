"""Same-node zero-copy transfers for ``dask.distributed``: workers keep results in the node's Depot store and
hand them to workers of the same store by id; transfers to other nodes stay Dask's TCP. See docs/DISTRIBUTED.md.

Needs ``distributed``; tested with 2026.7.1 and with Debian's python3-distributed 2022.12.1 (where they differ:
``_compat``). As a Dask preload (``--preload depot.dask.distributed``) it registers the ``depot://`` backend.
"""

try:
    import distributed as _distributed  # noqa: F401
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("depot.dask.distributed needs dask.distributed: pip install 'depot-shm[distributed]' "
                      "(or Debian's python3-distributed)") from e

from ._preload import dask_setup
from .cluster import LocalCluster, Nanny
from .comm import DepotTCPBackend, VersionMismatch, store_identity
from .data import DepotData, DepotRef, sweep_dead_writers
from .worker import Worker

__all__ = ["DepotData", "DepotRef", "DepotTCPBackend", "LocalCluster", "Nanny", "VersionMismatch", "Worker",
           "dask_setup", "store_identity", "sweep_dead_writers"]
