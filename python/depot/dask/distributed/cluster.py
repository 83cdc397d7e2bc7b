"""``depot.dask.distributed.LocalCluster``: Dask's LocalCluster with Depot workers on one store."""

from __future__ import annotations

import multiprocessing

import distributed
from distributed.deploy.utils import nprocesses_nthreads
from distributed.system import MEMORY_LIMIT

from . import comm as depot_comm
from .data import DEFAULT_INLINE_BYTES, sweep_dead_writers
from .worker import Worker

__all__ = ["LocalCluster", "Nanny"]

DEFAULT_CAPACITY = "1g"


def _check_not_importing_main():
    """Raises multiprocessing's error for a script without an ``if __name__ == "__main__":`` guard, before the
    cluster starts anything: a worker process (started with "spawn", as Dask's are) imports the main module,
    and a cluster built at its top level would be built again there, and again in that one's workers."""
    if getattr(multiprocessing.current_process(), "_inheriting", False):
        raise RuntimeError(
            "depot.dask.distributed.LocalCluster was created while a new process imported the main module: an "
            "attempt has been made to start a new process before the current process has finished its "
            "bootstrapping phase. Create the cluster under the usual idiom in the main module:\n\n"
            "    if __name__ == \"__main__\":\n        cluster = LocalCluster(...)\n\n(see \"Safe importing of "
            "main module\" in https://docs.python.org/3/library/multiprocessing.html)")


def _start_store(depot_dir, depot_capacity, depot_spill_dir, max_clients=None, max_objects=None):
    """Attaches to the store in ``depot_dir``, starting a daemon owned by this process when none serves it.
    Returns (client, daemon or None)."""
    import depot
    try:
        return depot.connect(depot_dir), None
    except depot.DaemonNotRunningError:
        pass
    daemon = depot.start(dir=depot_dir, capacity=depot_capacity, spill_dir=depot_spill_dir, max_clients=max_clients,
                         max_objects=max_objects)
    try:
        return depot.connect(daemon.dir), daemon
    except BaseException:
        daemon.stop()
        raise


class Nanny(distributed.Nanny):
    """A ``distributed.Nanny`` whose worker process runs ``depot.dask.distributed.Worker``."""

    def __init__(self, *args, worker_class=Worker, **kwargs):
        super().__init__(*args, worker_class=worker_class, **kwargs)


class LocalCluster(distributed.LocalCluster):
    """A ``distributed.LocalCluster`` whose workers keep results in one Depot store and hand them to each other
    by id.

    Takes every argument of ``distributed.LocalCluster`` plus:

    Parameters
    ----------
    depot_dir : str, optional
        The store directory; default ``$DEPOT_DIR``, else ``/dev/shm/depot-$USER``. When no daemon serves it,
        the cluster starts one, owned by this process: it stops (and its store is removed) when the cluster
        closes or this process dies.
    depot_capacity : str or int
        Capacity of a store the cluster starts (default 1 GiB); a daemon that already serves ``depot_dir``
        keeps its own.
    depot_inline_bytes : int
        Results smaller than this stay in worker memory and travel over TCP.
    depot_spill_dir : str, optional
        Spill directory of a daemon the cluster starts: when the store is full, results are written there
        (least recently used first) and read back on use, instead of failing. A daemon that already serves
        ``depot_dir`` keeps its own setting (``depot serve --spill-dir``).
    depot_max_clients, depot_max_objects : int, optional
        Client slots and object limit of a store the cluster starts (``depot.start(max_clients=, max_objects=)``).

    Workers run in processes (each under a Nanny) and talk ``depot://`` (TCP with the store's identity in the
    handshake). Their ``memory_limit`` defaults to Dask's "auto" share of the machine *plus* the store's
    capacity, because the kernel counts the shared pages a worker touches in its RSS, which the Nanny watches.

    A start that fails (a worker that cannot start, a script without an ``if __name__ == "__main__":`` guard
    interrupted) stops the daemon the cluster started and removes its store; workers never start one.

    Examples
    --------
    >>> from depot.dask.distributed import LocalCluster
    >>> from distributed import Client
    >>> with LocalCluster(n_workers=2, depot_capacity="2g") as cluster, Client(cluster) as client:
    ...     total = client.submit(sum, [1, 2, 3]).result()
    """

    def __init__(self, *args, depot_dir=None, depot_capacity=DEFAULT_CAPACITY,
                 depot_inline_bytes=DEFAULT_INLINE_BYTES, depot_spill_dir=None, depot_max_clients=None,
                 depot_max_objects=None, **kwargs):
        _check_not_importing_main()
        self.depot_client, self.depot_daemon = _start_store(depot_dir, depot_capacity, depot_spill_dir,
                                                            depot_max_clients, depot_max_objects)
        self._depot_dir = self.depot_client.directory
        try:
            kwargs.setdefault("processes", True)
            kwargs.setdefault("protocol", depot_comm.SCHEME + "://")
            kwargs.setdefault("dashboard_address", None)
            kwargs.setdefault("worker_class", Nanny if kwargs["processes"] else Worker)
            if "memory_limit" not in kwargs:
                n = kwargs.get("n_workers") or nprocesses_nthreads()[0]
                kwargs["memory_limit"] = MEMORY_LIMIT // max(1, n) + self.depot_client.stat().capacity_bytes
            kwargs.update(depot_dir=self.depot_client.directory, depot_inline_bytes=depot_inline_bytes)
            super().__init__(*args, **kwargs)
        except BaseException:  # also KeyboardInterrupt: what the start started goes with it
            self._close_store()
            raise

    @property
    def depot_dir(self):
        """The store directory the cluster's workers use."""
        return self._depot_dir

    def close(self, *args, **kwargs):
        try:
            return super().close(*args, **kwargs)
        finally:
            self._close_store()

    def _close_store(self):
        client, self.depot_client = self.depot_client, None
        if client is None:
            return
        try:
            sweep_dead_writers(client)  # objects of workers that died without cleaning up
        finally:
            client.close()
            if self.depot_daemon is not None:
                self.depot_daemon.stop()
                self.depot_daemon = None
