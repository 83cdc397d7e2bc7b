"""``--preload depot.dask.distributed``: what the preload does for each kind of Dask server.

A preload runs once its server is built, so it cannot give a worker its ``data=`` mapping: a Depot worker is
chosen with ``--worker-class depot.dask.distributed.Worker``. The preload's import registers the ``depot://``
comm backend (for a scheduler or client run from a checkout, where the package's entry point is not
installed), and on a Depot worker it logs which store, of what capacity, the worker serves.
"""

from __future__ import annotations

import logging

__all__ = ["dask_setup"]

logger = logging.getLogger("depot.dask.distributed")


def dask_setup(server):
    """Called by Dask with the scheduler, nanny or worker being started."""
    import distributed
    from .worker import Worker
    if isinstance(server, Worker):
        if server.depot_client is not None:
            stat = server.depot_client.stat()
            logger.info("depot: worker %s serves the store %s (capacity %d bytes, daemon pid %d)",
                        server.address, server.depot_client.directory, stat.capacity_bytes,
                        server.depot_client.daemon_pid)
    elif isinstance(server, distributed.Worker):
        logger.error("depot: worker %s is a plain distributed.Worker: a preload cannot give it a Depot data "
                     "mapping; start it with --worker-class depot.dask.distributed.Worker", server.address)
