"""``depot.dask.Scheduler``: Dask graphs on a pool of worker processes that hand results to each other through
Depot, by id.

The graph is run by Dask's own ``dask.local.get_async`` (so ordering, callbacks and the release of results no
task needs any more are Dask's, in either supported version) with this module's executor and its ``cache=``
mapping: the mapping holds what travels in place of results (a ``Held`` or ``Stored`` id, or an ``Inline``
pickle), pins the stored ones while they are needed and deletes them (or has their holders forget them) the moment
Dask releases them.
"""

import collections.abc
import os
import threading

from depot.client import default_directory

from . import _placement, _worker
from ._objects import buffers_of, get_object, put_object, shared_client
from ._pool import Pool, WorkerDiedError, WorkerStartError
from ._refs import Held, Inline, Stored

__all__ = ["Scheduler", "WorkerDiedError", "WorkerStartError", "RemoteTraceback"]

RemoteTraceback = _worker.RemoteTraceback

INLINE_BYTES_DEFAULT = 64 << 10
#: chunksize=None: graphs of at least this many tasks per worker go in batches of AUTO_CHUNKSIZE (Dask's process
#: scheduler's default), smaller ones one task per message (so that few, long tasks spread over the workers)
AUTO_CHUNK_MIN_TASKS_PER_WORKER = 1000
AUTO_CHUNKSIZE = 6
_SCALARS = (int, float, complex, str, bool, type(None))


class Scheduler:
    """Runs Dask graphs on worker processes that pass results through Depot.

    Parameters
    ----------
    workers : int, optional
        Worker processes (spawned, each with its own Depot client). Default: ``os.cpu_count()``.
    dir : str, optional
        The store's directory. Default: ``depot.default_directory()``. The store is started when none serves
        it (as ``depot.connect(dir, start=True)``).
    capacity : int or str, optional
        The capacity of a store this scheduler starts.
    spill_dir, max_clients, max_objects : optional
        The spill directory, client slots and object limit of a store this scheduler starts (as
        ``depot.start()`` takes them); a store already served keeps its own.
    inline_bytes : int
        Results whose pickle (stream and buffers) is at least this large are stored in Depot by the worker
        that computed them and only their id travels; smaller ones travel inline.
    chunksize : int, optional
        Tasks per message to a worker (as Dask's process scheduler's ``chunksize``). Default: 1 for graphs of
        fewer than 1,000 tasks per worker, else 6 (a message per task costs more than a tiny task).
    depth : int
        Batches queued on each worker, so that a worker never waits for the scheduler between tasks.

    Examples
    --------
    >>> with depot.dask.Scheduler(workers=2) as s:      # doctest: +SKIP
    ...     total = x.sum().compute(scheduler=s)
    """

    def __init__(self, workers=None, dir=None, capacity=None, inline_bytes=INLINE_BYTES_DEFAULT, chunksize=None,
                 depth=2, spill_dir=None, max_clients=None, max_objects=None):
        if inline_bytes < 0:
            raise ValueError("inline_bytes must be >= 0, got %r" % (inline_bytes,))
        if (chunksize is not None and chunksize < 1) or depth < 1:
            raise ValueError("chunksize and depth must be >= 1, got %r and %r" % (chunksize, depth))
        self.directory = os.path.abspath(dir if dir is not None else default_directory())
        self.inline_bytes = inline_bytes
        self.chunksize = chunksize
        self.depth = depth
        self._client = shared_client(self.directory, start=True, capacity=capacity, spill_dir=spill_dir,
                                     max_clients=max_clients, max_objects=max_objects)
        self._pool = Pool(workers or os.cpu_count() or 1, self.directory, inline_bytes, self._client, depth)
        self._closed = False
        self._lock = threading.Lock()

    @property
    def workers(self):
        """The pids of the worker processes."""
        return self._pool.pids()

    def __call__(self, dsk, keys, **kwargs):
        """Computes ``keys`` of the graph ``dsk`` (Dask's ``scheduler=`` interface). Returns real objects; large
        ones are read-only views of shared memory."""
        if self._closed:
            raise RuntimeError("this depot.dask Scheduler is closed")
        dsk = _cull(dsk, keys)
        if not isinstance(dsk, collections.abc.Mapping):
            dsk = dsk.__dask_graph__()  # Dask 2025+ hands an expression over; get_async would do the same
        compute = self._pool.new_compute()
        outer, _running.compute = getattr(_running, "compute", None), compute
        try:
            return self._compute(dsk, keys, compute, kwargs)
        finally:
            _running.compute = outer

    get = __call__

    def _compute(self, dsk, keys, compute, kwargs):
        from dask.callbacks import local_callbacks
        from dask.local import get_async
        results = _Results(compute, self._client, self.inline_bytes, self._pool)
        try:
            # the caller's callbacks as get_async would take them (the global ones unless some were given, and
            # then none for a scheduler nested inside a task), and one of ours that shows placement the graph
            with local_callbacks(kwargs.get("callbacks")) as callbacks:
                chunksize = self._chunksize_for(dsk)
                compute.results, compute.chunksize = results, chunksize
                callbacks = tuple(callbacks) + (_graph_callback(compute, self._pool.size, chunksize),)
                # twice as many batches submitted as the workers queue, so that a worker with room chooses
                out = get_async(lambda fn, args: self._pool.submit(compute, fn, args),
                                self._pool.size * self.depth * 2, dsk, keys, cache=results,
                                get_id=_worker.worker_id, dumps=_worker.identity, loads=_worker.load_task,
                                pack_exception=_worker.pack_exception, raise_exception=_raise_remote,
                                rerun_exceptions_locally=False, chunksize=chunksize,
                                callbacks=callbacks)
            return _materialize(out, self._client, self._pool, compute)
        except BaseException as e:
            results.close()
            self._pool.abandon(compute, cancel=not isinstance(e, Exception))
            raise
        finally:
            results.close()
            self._pool.drain()

    def _chunksize_for(self, dsk):
        if self.chunksize is not None:
            return self.chunksize
        try:
            tasks = len(dsk)
        except TypeError:
            return 1
        return AUTO_CHUNKSIZE if tasks >= AUTO_CHUNK_MIN_TASKS_PER_WORKER * self._pool.size else 1

    @property
    def closed(self):
        return self._closed

    def close(self):
        """Stops the workers and deletes every object this scheduler made (objects handed to the caller stay
        readable until the caller drops them)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._pool.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "Scheduler(workers=%d, dir=%r%s)" % (self._pool.size, self.directory,
                                                    ", closed" if self._closed else "")


class _Results(collections.abc.MutableMapping):
    """``get_async``'s ``cache``: key -> ``Stored`` / ``Inline`` / small literal. Stored objects are pinned while
    some key refers to them and deleted (if this compute made them) when the last such key is released."""

    def __init__(self, compute, client, inline_bytes, pool):
        self._pool = pool
        self._compute = compute
        self._client = client
        self._inline_bytes = inline_bytes
        self._data = {}
        self._pins = {}
        self._lock = threading.Lock()
        self._closed = False

    def __getitem__(self, key):
        return self._data[key]

    def __setitem__(self, key, value):
        if isinstance(value, Held):
            self._hold_held(value)
        elif isinstance(value, Stored):
            self._hold(value)
        elif not isinstance(value, Inline):
            value = self._literal(value)
        old = self._data.get(key)
        self._data[key] = value
        if old is not None:
            self._drop(old)

    def __delitem__(self, key):
        self._drop(self._data.pop(key))

    def __iter__(self):
        return iter(self._data)

    def __len__(self):
        return len(self._data)

    def __contains__(self, key):
        return key in self._data

    def _literal(self, value):
        """Data in the graph itself: stored once when large, so that tasks get its id and not a copy."""
        if isinstance(value, _SCALARS):
            return value
        try:
            stream, buffers = buffers_of(value)
        except Exception:
            return value  # not picklable: sending it will say so
        nbytes = len(stream) + sum(b.raw().nbytes for b in buffers)
        if nbytes < self._inline_bytes:
            return value
        stored = Stored(self._compute.new_oid(), nbytes)
        put_object(self._client, stored.oid, value)
        self._hold(stored)
        return stored

    def _hold(self, stored):
        with self._lock:
            entry = self._pins.get(stored.oid)
            if entry is None:
                entry = self._pins[stored.oid] = [self._client.get(stored.oid, timeout=0), 0, stored.owned]
            entry[1] += 1

    def _hold_held(self, held):
        with self._lock:
            entry = self._pins.get(held.oid)
            if entry is None:
                entry = self._pins[held.oid] = [None, 0, True, held]
            entry[1] += 1

    def _release(self, oid, entry):
        if len(entry) > 3:
            self._pool.release_held(self._compute, entry[3])
        else:
            self._pool.discard(entry[0], oid, entry[2])

    def _drop(self, value):
        if not isinstance(value, (Stored, Held)):
            return
        with self._lock:
            entry = self._pins.get(value.oid)
            if entry is None:
                return
            entry[1] -= 1
            if entry[1] > 0:
                return
            del self._pins[value.oid]
        self._release(value.oid, entry)

    def close(self):
        """Releases every pin and deletes every object of this compute still held (those handed to the caller
        are pinned by the caller's objects, so the deletion waits for them)."""
        with self._lock:
            pins, self._pins = self._pins, {}
            self._data.clear()
            closed, self._closed = self._closed, True
        if closed:
            return
        for oid, entry in pins.items():
            self._release(oid, entry)
        self._pool.end_compute(self._compute)


def _materialize(value, client, pool, compute):
    if isinstance(value, tuple):
        return tuple(_materialize(v, client, pool, compute) for v in value)
    if isinstance(value, Held):
        return pool.fetch(compute, value)
    if isinstance(value, Stored):
        return get_object(client, value.oid, timeout=0)
    if isinstance(value, Inline):
        return value.load()
    return value


#: the compute ``Scheduler.__call__`` runs in this thread (``get_async`` calls the callbacks in it)
_running = threading.local()


def task_seconds(key):
    """The seconds task ``key`` of the depot.dask compute running in this thread ran in its worker, as the worker
    measured it; None outside a depot.dask compute or before the task ran. For callbacks (``depot.dask.Cache``):
    their ``pretask``/``posttask`` clock in the caller counts the time a task waited in a worker's queue, and ~0
    for a task a worker ran as a continuation (its result is already there when ``get_async`` submits it)."""
    compute = getattr(_running, "compute", None)
    return None if compute is None else compute.task_seconds.get(key)


def _graph_callback(compute, workers, chunksize):
    """A ``dask.callbacks.Callback`` (as the tuple ``get_async`` takes) whose start-state hook hands the
    dependents and dependencies ``get_async`` computes anyway to the compute's placement, and the graph as
    ``get_async`` runs it (each version's own task format: Dask 2026 converts it before the hooks run) to its
    continuations (``_continuations``), and splits the tasks ready at the start into one share per worker
    (``_placement.split_roots``; it reorders ``state["ready"]``, which both supported versions pop from the
    end)."""
    from dask.callbacks import Callback

    def start_state(dsk, state):
        compute.dsk = dsk
        compute.dependents = state.get("dependents")
        compute.dependencies = state.get("dependencies")
        compute.unsubmitted = state.get("ready")
        compute.roots = _placement.split_roots(state.get("ready"), workers, chunksize)

    return Callback(start_state=start_state)._callback


def _raise_remote(exc, tb=None):
    if isinstance(tb, str):
        exc.__cause__ = RemoteTraceback(tb)
    raise exc


def _old_dask():
    import dask
    try:
        return int(dask.__version__.split(".")[0]) < 2024
    except ValueError:
        return False


def _cull(dsk, keys):
    """Dask before 2024.12 runs every key of the graph it is given; cull it to what ``keys`` need."""
    if not _old_dask():
        return dsk
    from dask.core import flatten
    from dask.optimization import cull
    if not isinstance(dsk, collections.abc.Mapping):
        dsk = dsk.__dask_graph__()
    culled, _ = cull(dict(dsk), list(flatten(keys)) if isinstance(keys, list) else [keys])
    return culled
