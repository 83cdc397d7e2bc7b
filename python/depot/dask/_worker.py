"""A depot.dask worker process: runs batches of tasks with Dask's own ``dask.local.batch_execute_tasks`` (which
the scheduler sends it by reference, so each Dask version runs its own task format), reading inputs that are in
Depot zero-copy and storing large results there.

The messages on the worker's pipe, pickled:

    scheduler -> worker   (batch id, {number: function's bytes}, [numbers to forget], batch)   run a batch, the
                          batch being (function, arguments, {key: object id for its result}) pickled with
                          by-value functions as numbers (see _functions)
                          (None, None, None, None)                                              stop
    worker -> scheduler   ("ready", pid) once connected; ("failed", traceback) if it could not connect
                          (batch id, [(key, Stored | Inline | (exception, traceback), failed)])
"""

import os
import pickle
import signal
import sys
import traceback

from ._objects import buffers_of, get_object, put_object
from depot.ids import ObjectId

from ._functions import FunctionTable
from ._refs import Inline, Stored

#: set in a worker process only; the scheduler's process leaves it None
_state = None

STOP = (None, None, None, None)
SYS_PATH_ENV_NAME = "DEPOT_DASK_SYS_PATH"


class _WorkerState:
    def __init__(self, client, inline_bytes):
        self.client = client
        self.inline_bytes = inline_bytes
        # objects read from Depot during the batch: id(obj) -> (obj, Stored); a task that returns one of them
        # unchanged passes its reference on instead of storing a copy
        self.resolved = {}
        self.loaded = {}
        #: the result ids of the batch running now (their prefix names its compute: depot.dask.dataframe)
        self.batch_oids = {}

    def resolve(self, value):
        if isinstance(value, Stored):
            obj = self.loaded.get(value.oid)
            if obj is None:
                obj = get_object(self.client, value.oid, timeout=0)
                self.loaded[value.oid] = obj
                self.resolved[id(obj)] = (obj, value)
            return obj
        if isinstance(value, Inline):
            return value.load()
        return value

    def encode(self, key, result, oid):
        hit = self.resolved.get(id(result))
        if hit is not None and hit[0] is result:
            return hit[1]
        stream, buffers = buffers_of(result)
        raws = [b.raw() for b in buffers]
        nbytes = len(stream) + sum(r.nbytes for r in raws)
        if nbytes >= self.inline_bytes:
            try:
                put_object(self.client, oid, result)
                return Stored(oid, nbytes)
            except (pickle.PicklingError, AttributeError, TypeError):
                pass  # only cloudpickle can pickle it (a lambda inside, say): it travels inline
        return Inline(stream, [r.tobytes() for r in raws])

    def finish_batch(self):
        # the inputs' arrays become garbage, and their pins go with them (releases never cross the socket)
        self.resolved.clear()
        self.loaded.clear()


def load_task(task_info):
    """``loads`` for ``dask.local.get_async``: in a worker, the task with its inputs read (zero-copy for those in
    Depot); in the scheduler's process (no worker state) the identity."""
    state = _state
    if state is None:
        return task_info
    task, data = task_info
    if data:
        data = {k: state.resolve(v) for k, v in data.items()}
    return task, data


def worker_id():
    """``get_id`` for ``dask.local.get_async``: the worker's pid."""
    return os.getpid()


def identity(x):
    """``dumps`` for ``dask.local.get_async``: tasks travel in the batch's own pickle."""
    return x


def task_hooks():
    """The callables the scheduler gives ``get_async``, which it passes with every task: a batch of
    ``batch_execute_tasks`` with exactly these travels without them (``compact``) and gets them back here."""
    return identity, load_task, worker_id, pack_exception


def compact(fn, args):
    """``(None, [(key, task)])`` for a standard batch, else ``(fn, args)`` unchanged."""
    from dask.local import batch_execute_tasks
    hooks = task_hooks()
    if fn is not batch_execute_tasks or any(len(a) != 6 or any(x is not y for x, y in zip(a[2:], hooks))
                                            for a in args):
        return fn, args
    return None, [(a[0], a[1]) for a in args]


def expand(fn, args):
    """The inverse of ``compact``."""
    if fn is not None:
        return fn, args
    from dask.local import batch_execute_tasks
    hooks = task_hooks()
    return batch_execute_tasks, [(key, task) + hooks for key, task in args]


class RemoteTraceback(Exception):
    """The traceback of an exception raised in a depot.dask worker (attached as the exception's cause)."""

    def __init__(self, text):
        super().__init__(text)
        self.text = text

    def __str__(self):
        return "\n" + self.text


def pack_exception(e, dumps):
    """``pack_exception`` for ``dask.local.get_async``: the exception and its traceback as text. An exception
    that cannot be pickled travels as a RuntimeError with its repr."""
    text = "".join(traceback.format_exception(type(e), e, e.__traceback__))
    try:
        pickle.loads(pickle.dumps(e))
    except Exception:
        e = RuntimeError("%s (the exception could not be pickled)" % repr(e)[:2000])
    e.__traceback__ = None
    e.__context__ = None
    e.__cause__ = None
    return e, text


def _run(state, fn, args, oids):
    state.batch_oids = oids
    out = []
    for key, res_info, failed in fn(args):
        if not failed:
            result, _ = res_info
            try:
                res_info = (state.encode(key, result, ObjectId(oids[key])), os.getpid())
            except BaseException as e:
                res_info, failed = pack_exception(e, None), True
        if failed:
            exc, text = res_info
            res_info = (exc, "task %r failed in depot.dask worker %d:\n%s" % (key, os.getpid(), text))
        out.append((key, res_info, failed))
    return out


def run():
    """The entry point of a worker process: ``python -c "from depot.dask._worker import run; run()" FD DIR
    INLINE_BYTES``, FD being its end of a socket pair to the scheduler."""
    import json
    import multiprocessing.connection
    for entry in json.loads(os.environ.pop(SYS_PATH_ENV_NAME, "[]")):
        if entry not in sys.path:
            sys.path.append(entry)
    fd, directory, inline_bytes = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    os.set_inheritable(fd, False)
    main(multiprocessing.connection.Connection(fd), directory, inline_bytes)


def main(conn, directory, inline_bytes):
    """The worker's life: connect, say ready, run batches until told to stop or the scheduler goes away."""
    global _state
    # Ctrl-C reaches the whole process group; the scheduler decides what to cancel
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        import depot
        client = depot.connect(directory)
        import dask.local  # noqa: F401  (every batch needs it; importing it now keeps it out of the first task)
        try:
            import numpy  # noqa: F401
        except ImportError:
            pass
    except BaseException:
        conn.send_bytes(pickle.dumps(("failed", traceback.format_exc())))
        return
    _state = _WorkerState(client, inline_bytes)
    functions = FunctionTable()
    conn.send_bytes(pickle.dumps(("ready", os.getpid())))
    try:
        while True:
            try:
                message = conn.recv_bytes()
            except (EOFError, OSError):
                break
            try:
                batch_id, definitions, forget, body = pickle.loads(message)
                if batch_id is not None:
                    functions.update(definitions, forget)
                    fn, args, oids = functions.loads(body)
                    fn, args = expand(fn, args)
                del body
            except BaseException:
                # cannot even read the batch (a function pickled by reference that this process cannot
                # import, say): say so instead of dying
                batch_id = int.from_bytes(message[-8:], "little")
                conn.send_bytes(pickle.dumps(("unreadable", (batch_id, traceback.format_exc()))))
                continue
            if batch_id is None:
                break
            out = _run(_state, fn, args, oids)
            del args
            reply = pickle.dumps((batch_id, out), protocol=5)
            del out
            _state.finish_batch()
            try:
                conn.send_bytes(reply)
            except (BrokenPipeError, OSError):
                break
    finally:
        client.close()
        sys.stdout.flush()
