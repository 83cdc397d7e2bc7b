"""Same-node zero-copy transfers for ``dask.distributed``: workers keep results in the node's Depot store and
hand them to workers of the same store by id; transfers to other nodes stay Dask's TCP. See docs/DASK.md.

Needs ``distributed`` (Debian's python3-distributed 2022.12.1 is the version tested here).
"""

try:
    import distributed as _distributed  # noqa: F401
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("depot.dask.distributed needs dask.distributed: pip install 'depot-shm[distributed]' "
                      "(or Debian's python3-distributed)") from e

from .cluster import LocalCluster, Nanny
from .comm import DepotTCPBackend, VersionMismatch, store_identity
from .data import DepotData, DepotRef, sweep_dead_writers
from .worker import Worker

__all__ = ["DepotData", "DepotRef", "DepotTCPBackend", "LocalCluster", "Nanny", "VersionMismatch", "Worker",
           "store_identity", "sweep_dead_writers"]
