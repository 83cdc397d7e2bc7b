"""The Depot task running now, as the scheduler running it describes it: one ``TaskContext``, set through
``contextvars`` by each Depot scheduler around the tasks it runs, and read by the code that runs inside tasks
(the DataFrame shuffle's tasks, ``depot.cache``), which imports nothing of the schedulers.

- A depot.dask worker process sets it around each batch it runs (``depot.dask._worker``).
- A depot.dask.distributed worker sets it around each task it executes (``depot.dask.distributed.Worker``);
  distributed runs the task in a copy of that context, in its thread pool or on its event loop (versions of
  distributed that do not copy it into the thread pool get it through ``add_finder``).
- Elsewhere (a plain caller, Dask's threaded, process and synchronous schedulers) there is none, and
  ``client_for`` gives this process's shared client of the store.
"""

import contextvars
import os

from ._shared_clients import shared_client

__all__ = ["TaskContext", "add_finder", "client_for", "current", "running"]


class TaskContext:
    """What a task needs to know of the scheduler running it.

    Parameters
    ----------
    client : depot.Client
        The client the task uses (its worker's).
    id_prefix : bytes
        The prefix of the ids of objects the task writes for other tasks, by which the scheduler finds and
        deletes what the task leaves: the running compute's prefix in a depot.dask worker (a failed compute's
        objects go by it), the worker's writer prefix in a depot.dask.distributed worker (pid and start time:
        a dead worker's objects go by it).
    adopt : callable, optional
        ``adopt(oid, nbytes, owned=True) -> value``: the object of ``nbytes`` in Depot under ``oid``, read for
        the task; when the task returns it, the scheduler passes the id on instead of storing a copy. ``owned``:
        a result the task stored itself (under an id starting with ``id_prefix``), which the scheduler deletes
        when no task needs it; else an object of someone else's (``depot.dask.share``). None where results are
        not passed by id (depot.dask.distributed).
    keep_private : callable, optional
        ``keep_private(value)``: the worker keeps the task's result ``value`` in its own memory until a peer
        asks for it (depot.dask.distributed); None elsewhere.
    """

    __slots__ = ("client", "id_prefix", "adopt", "keep_private")

    def __init__(self, client, id_prefix, adopt=None, keep_private=None):
        self.client = client
        self.id_prefix = bytes(id_prefix)
        self.adopt = adopt
        self.keep_private = keep_private

    def __repr__(self):
        return "TaskContext(%s, id prefix %s)" % (self.client.directory, self.id_prefix.hex())


_current = contextvars.ContextVar("depot_task_context", default=None)


_finders = []


def current():
    """The ``TaskContext`` of the task running in this context, or None outside Depot's schedulers."""
    context = _current.get()
    if context is None:
        for find in _finders:
            context = find()
            if context is not None:
                break
    return context


def add_finder(find):
    """For a scheduler that cannot carry the context variable into the threads that run its tasks (distributed
    before it ran tasks in a copy of the context): ``find()`` returns the ``TaskContext`` of the task running
    in the calling thread, or None; ``current`` asks it when the variable is not set."""
    if find not in _finders:
        _finders.append(find)


class running:
    """``with running(context):`` runs the block, and the tasks it starts, as tasks of ``context``."""

    __slots__ = ("_context", "_token")

    def __init__(self, context):
        self._context = context
        self._token = None

    def __enter__(self):
        self._token = _current.set(self._context)
        return self._context

    def __exit__(self, *exc):
        _current.reset(self._token)


def client_for(directory):
    """The client a task uses for the store in ``directory``: the running task's when its scheduler serves that
    store, else this process's shared client of it."""
    context = _current.get()
    if context is not None and context.client.directory == os.path.abspath(directory):
        return context.client
    return shared_client(directory)
