"""``depot.dask.distributed.Worker``: a ``distributed.Worker`` whose results live in the node's Depot store.

Use it with ``dask worker SCHEDULER --worker-class depot.dask.distributed.Worker`` on a node whose daemon
(``depot serve``) is running (see docs/DISTRIBUTED.md), or through ``depot.dask.distributed.LocalCluster``.
Public hooks only:

- ``data=``: results are kept in a ``DepotData`` mapping (Depot-backed, zero-copy);
- the ``depot://`` comm backend (``distributed.comm.backends`` entry point): its handshake says which store
  each end serves;
- the worker class overrides the ``get_data`` handler only to tell the mapping, for the duration of one
  request, that the requesting peer serves the same store (so values go out as ids).

If the store cannot be reached, the worker warns once and runs as a plain ``distributed.Worker`` (its results
in process memory, transfers over TCP).
"""

from __future__ import annotations

import asyncio
import logging
import warnings

import distributed
from tornado.ioloop import PeriodicCallback

from ..._task_context import TaskContext, add_finder, running
from .._ids import writer_prefix
from . import _compat, comm as depot_comm
from .data import DEFAULT_INLINE_BYTES, DepotData, sending_by_id, sweep_dead_writers

__all__ = ["Worker", "SWEEP_INTERVAL_MS"]

logger = logging.getLogger("depot.dask.distributed")

#: How often a worker deletes objects of dead workers of its store.
SWEEP_INTERVAL_MS = 2000
# How often, and how many times, a worker that dropped a shuffle map's output asks again who else holds it.
_HOLDER_RECHECK_SECONDS = 0.5
_HOLDER_RECHECKS = 60


def _connect(depot_dir):
    """Attaches to the node's store. A worker never starts a daemon: the store's size is the operator's choice
    (``depot serve --capacity``), made once per node, never a default a worker would pick."""
    import depot
    return depot.connect(depot_dir)


class Worker(distributed.Worker):
    """A Dask worker that keeps results holding buffers in Depot and passes them to workers of the same store
    by id.

    Parameters
    ----------
    depot_dir : str, optional
        The store directory (default: ``$DEPOT_DIR``, else ``/dev/shm/depot-$USER``). A daemon must serve it
        (``depot serve``, or the one a ``LocalCluster`` starts); when none does, the worker warns once and runs
        as a plain ``distributed.Worker``. A worker never starts a daemon itself.
    depot_inline_bytes : int
        Results smaller than this stay in worker memory and travel over TCP.
    **kwargs
        Everything ``distributed.Worker`` takes (``data=`` is set by this class).
    """

    def __init__(self, *args, depot_dir=None, depot_inline_bytes=DEFAULT_INLINE_BYTES, **kwargs):
        self.depot_counters = {"sent_by_id": 0, "sent_by_id_bytes": 0, "sent_plain": 0, "sent_remote": 0,
                               "received_by_id": 0,
                               "received_by_id_bytes": 0, "stored": 0, "stored_bytes": 0, "swept": 0,
                               "kept_private": 0, "derived_private": 0, "published": 0}
        self.depot_client = None
        self.depot_store = None
        try:
            self.depot_client = _connect(depot_dir)
            self.depot_store = depot_comm.store_identity(self.depot_client.directory)
        except Exception as e:  # any failure to reach the store: run as a plain worker, say so once
            warnings.warn("Depot store %s unreachable (%s); this worker passes data over TCP only. Start the "
                          "node's daemon before its workers: depot serve --dir DIR --capacity SIZE"
                          % (depot_dir or "(default: $DEPOT_DIR or /dev/shm/depot-$USER)", e), RuntimeWarning)
            if self.depot_client is not None:
                self.depot_client.close()
            self.depot_client = None
        if self.depot_client is not None:
            depot_comm.serve_store(self.depot_store)
            kwargs["data"] = DepotData(self.depot_client, depot_inline_bytes, self.depot_counters)
        super().__init__(*args, **kwargs)
        self.handlers["depot_counters"] = self._depot_counters_handler
        if self.depot_client is not None:
            pc = PeriodicCallback(self._sweep, SWEEP_INTERVAL_MS)
            self.periodic_callbacks["depot-sweep"] = pc
            kwargs["data"].on_slices_dropped = self._slices_dropped

    def _slices_dropped(self, key, oids):
        """A DataFrame shuffle map's output left this worker (any thread): its slices no reducer has read are
        deleted, unless another worker still holds the key. The Active Memory Manager drops a copy of a key
        held twice (here, and on the worker whose reducer fetched it) while reducers still wait for it."""
        self.loop.add_callback(self._delete_slices_unless_held, key, oids)

    async def _delete_slices_unless_held(self, key, oids):
        # Two holders that drop the key at the same moment (a failed job releases it everywhere) would each see
        # the other still listed and leave the slices to it: so a holder that sees another one asks again, until
        # nobody else holds the key (then it deletes) or the other holder keeps it past the re-check period
        # (reducers still wait; that holder deletes when it drops the key).
        for _ in range(_HOLDER_RECHECKS):
            try:
                who_has = await self.scheduler.who_has(keys=[key])
            except Exception as e:  # the scheduler is gone: the cluster's close sweeps the objects of dead workers
                logger.debug("depot: cannot ask who holds %s: %s", key, e)
                return
            holders = set(_compat.holders(who_has, key)) - {self.address}
            if not holders:
                break
            await asyncio.sleep(_HOLDER_RECHECK_SECONDS)
        else:
            return
        if self.depot_client is not None:
            from .._shuffle_tasks import delete_left
            delete_left(self.depot_client, oids)

    def _sweep(self):
        try:
            self.depot_counters["swept"] += sweep_dead_writers(self.depot_client)
        except Exception as e:  # the daemon may be restarting: try again next time
            logger.debug("depot sweep failed: %s", e)

    def _depot_counters_handler(self, comm=None):
        return self.depot_info()

    def depot_info(self):
        """The transfer counters, the store identity and the bytes this worker holds in shared memory."""
        info = dict(self.depot_counters)
        info["store"] = self.depot_store
        data = self.data
        info["shared_bytes"] = data.shared_bytes() if isinstance(data, DepotData) else 0
        return info

    def depot_task_context(self):
        """The ``TaskContext`` this worker's tasks run in: its client, its writer prefix, its mapping's
        ``keep_private``; None when it runs without a store."""
        if self.depot_client is None:
            return None
        keep_private = self.data.keep_private if isinstance(self.data, DepotData) else None
        return TaskContext(self.depot_client, writer_prefix(), keep_private=keep_private)

    async def execute(self, key, *, stimulus_id):
        # the task runs in a copy of this context (distributed's run_in_executor_with_context)
        context = self.depot_task_context()
        if context is None:
            return await super().execute(key, stimulus_id=stimulus_id)
        self._derive_private(key)
        with running(context):
            return await super().execute(key, stimulus_id=stimulus_id)

    def _derive_private(self, key):
        """A task that reads only values this worker keeps private (a shuffle's partitions) stores its result
        private too (``DepotData.derive_private``)."""
        data = self.data
        ts = self.state.tasks.get(key) if isinstance(data, DepotData) else None
        if ts is not None and ts.dependencies:
            data.derive_private(key, [dep.key for dep in ts.dependencies])

    async def get_data(self, comm, keys=(), **rest):
        # ``rest``: the request's other keywords, which differ between releases (_compat, difference 2)
        keys = list(keys or ())
        if self.depot_client is not None and depot_comm.same_store(comm):
            # The mapping counts what it hands out by id and what as bytes.
            with sending_by_id():
                return await super().get_data(comm, keys=keys, **rest)
        self.depot_counters["sent_remote"] += len(keys)
        return await super().get_data(comm, keys=keys, **rest)

    async def close(self, *args, **kwargs):
        try:
            return await super().close(*args, **kwargs)
        finally:
            data = self.data
            if isinstance(data, DepotData):
                data.clear()
            if self.depot_client is not None:
                self.depot_client.close()
                self.depot_client = None


def _task_context_of_this_thread():
    """The ``TaskContext`` of the depot worker whose task runs in this thread, for releases of distributed
    whose thread pool does not run tasks in a copy of ``execute``'s context (_compat, difference 3)."""
    try:
        worker = distributed.get_worker()
    except ValueError:
        return None
    return worker.depot_task_context() if isinstance(worker, Worker) else None


if not _compat.TASKS_SEE_EXECUTE_CONTEXT:
    add_finder(_task_context_of_this_thread)
