"""A depot.dask worker process: runs batches of tasks with Dask's own ``dask.local.batch_execute_tasks`` (which
the scheduler sends it by reference, so each Dask version runs its own task format), reading inputs that are in
Depot zero-copy and storing large results there.

It talks to the scheduler's pool with the messages of ``_transport``: it answers ``Ready`` once connected to the
store (``Failed`` if it could not connect, or if its protocol version is not the pool's), then takes ``RunBatch``,
``Publish``, ``Drop``, ``DropPrefix``, ``Unqueue`` and ``Stop``, and sends ``Results``, ``Unqueued`` and
``Unreadable``.

A reader thread takes every message off the pipe: it answers ``Publish``, ``Drop``, ``DropPrefix`` and ``Unqueue``
at once (between two of a running task's GIL switches) and queues batches for the main thread, which runs them
one after another.
"""

import collections
import os
import pickle
import signal
import sys
import threading
import time
import traceback

from ._objects import buffers_of, get_object, put_object
from depot._task_context import TaskContext, running
from depot.ids import ObjectId

from . import _transport
from ._compute import PREFIX_LENGTH
from ._functions import FunctionTable
from ._refs import Held, Inline, PublishFailed, Stored
from ._transport import Drop, DropPrefix, Failed, Publish, Ready, Results, RunBatch, Unqueue, Unqueued, Unreadable

#: set in a worker process only; the scheduler's process leaves it None
_state = None

#: a task whose input another worker holds waits for it in Depot, looking every this many seconds whether that
#: worker is still alive
PUBLISH_POLL_SECONDS = 0.05


class InputLostError(RuntimeError):
    """A task's input was held by a worker that died before it could hand it over."""


def await_published(client, value):
    """The ``Held`` result ``value`` read from Depot, waiting for its holder to store it there; InputLostError if
    the holder dies first or could not store it."""
    from depot.errors import ObjectMissingError
    while True:
        try:
            obj = get_object(client, value.oid, timeout=PUBLISH_POLL_SECONDS)
            break
        except ObjectMissingError:
            try:
                os.kill(value.holder, 0)
            except ProcessLookupError:
                raise InputLostError("depot.dask worker %d, which held %r, died before handing it over"
                                     % (value.holder, value)) from None
            except PermissionError:
                pass
    if isinstance(obj, PublishFailed):
        if getattr(obj, "store_full", None) is not None:
            from depot.errors import StoreFullError
            raise StoreFullError(
                "store full: depot.dask worker %d could not store %s, %s, in the store at %s: %s. Give the store "
                "more room (a larger --capacity for `depot serve`, or Scheduler(capacity=...) when the scheduler "
                "starts the store), or split the work into smaller chunks"
                % (value.holder, obj.text, _size_text(value.nbytes), client.directory, obj.store_full))
        raise InputLostError("depot.dask worker %d could not store %r:\n%s" % (value.holder, value, obj.text))
    return obj


def _size_text(nbytes):
    if nbytes >= 1 << 20:
        return "%.1f MiB" % (nbytes / (1 << 20))
    return "%d bytes" % nbytes


class _WorkerState:
    def __init__(self, client, inline_bytes):
        self.client = client
        self.inline_bytes = inline_bytes
        self.pid = os.getpid()
        # objects read from Depot during the batch: id(obj) -> (obj, Stored); a task that returns one of them
        # unchanged passes its reference on instead of storing a copy
        self.resolved = {}
        self.loaded = {}
        #: the result ids of the batch running now (their prefix names its compute: depot.dask.dataframe)
        self.batch_oids = {}
        #: results this worker computed and keeps: raw id -> object (or, once published, its view in Depot)
        self.held = {}
        #: the task key of each held result: raw id -> key (for the messages of a publish that fails)
        self.held_keys = {}

    def resolve(self, value):
        if isinstance(value, Held):
            return self._resolve_held(value)
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

    def _resolve_held(self, value):
        raw = bytes(value.oid)
        if value.holder == self.pid:
            try:
                obj = self.held[raw]
            except KeyError:
                raise InputLostError("depot.dask worker %d no longer holds %r" % (self.pid, value)) from None
            self.resolved[id(obj)] = (obj, value)
            return obj
        obj = self.loaded.get(value.oid)
        if obj is None:
            obj = await_published(self.client, value)
            self.loaded[value.oid] = obj
            self.resolved[id(obj)] = (obj, Stored(value.oid, value.nbytes))
        return obj

    def encode(self, key, result, oid):
        hit = self.resolved.get(id(result))
        if hit is not None and hit[0] is result:
            return hit[1]
        nbytes = _plain_array_nbytes(result)
        if nbytes >= self.inline_bytes:
            # a NumPy array without Python objects in it: plain pickle takes it, and its size is known without
            # pickling it (~0.1 ms a result here)
            raw = bytes(oid)
            self.held[raw] = result
            self.held_keys[raw] = key
            return Held(raw, nbytes, self.pid)
        try:
            buffers = []
            stream = pickle.dumps(result, protocol=5, buffer_callback=buffers.append)
            plain = True
        except (pickle.PicklingError, AttributeError, TypeError):
            stream, buffers = buffers_of(result)  # only cloudpickle can pickle it (a lambda inside, say)
            plain = False
        raws = [b.raw() for b in buffers]
        nbytes = len(stream) + sum(r.nbytes for r in raws)
        if nbytes >= self.inline_bytes and plain:
            raw = bytes(oid)
            self.held[raw] = result
            self.held_keys[raw] = key
            return Held(raw, nbytes, self.pid)
        return Inline(stream, [r.tobytes() for r in raws])

    def publish(self, raws):
        """Stores the held results ``raws`` in Depot (from the reader thread); each then stays held as its view in
        Depot, so that the private copy goes."""
        from depot.errors import ObjectExistsError, StoreFullError
        for raw in raws:
            obj = self.held.get(raw)
            oid = ObjectId(raw)
            if obj is None:
                put_object(self.client, oid, PublishFailed("it was no longer held by depot.dask worker %d" % self.pid))
                continue
            try:
                put_object(self.client, oid, obj)
            except ObjectExistsError:
                continue
            except StoreFullError as e:
                what = "the result of task %r (object %s)" % (self.held_keys.get(raw), oid.hex()[:12])
                try:
                    put_object(self.client, oid, PublishFailed(what, store_full=str(e)))
                except Exception:
                    pass
                continue
            except Exception:
                try:
                    put_object(self.client, oid, PublishFailed(traceback.format_exc()))
                except Exception:
                    pass
                continue
            try:
                view = get_object(self.client, oid, timeout=0)
            except Exception:
                continue
            if self.held.get(raw) is obj:
                self.held[raw] = view

    def adopt(self, oid, nbytes, owned=True):
        """The object of ``nbytes`` in Depot under ``oid``, read for the running task, which may return it: the
        worker then passes its id on, as for a task that returns a stored input (``TaskContext.adopt``). The
        compute deletes it when no task needs it any more if ``owned`` (a result the task stored itself, under
        an id of the running compute), never otherwise (a ``share``d object)."""
        return self.resolve(Stored(oid, nbytes, owned))

    def task_context(self, oids):
        """The ``TaskContext`` of a batch whose results get the ids ``oids`` (key -> id): this worker's client,
        and the prefix of the batch's compute."""
        prefix = bytes(next(iter(oids.values())))[:PREFIX_LENGTH] if oids else b""
        return TaskContext(self.client, prefix, adopt=self.adopt)

    def drop(self, raws):
        for raw in raws:
            self.held.pop(raw, None)
            self.held_keys.pop(raw, None)

    def drop_prefix(self, prefix):
        for raw in [r for r in self.held if r.startswith(prefix)]:
            self.held.pop(raw, None)
            self.held_keys.pop(raw, None)

    def finish_batch(self):
        # the inputs' arrays become garbage, and their pins go with them (releases never cross the socket)
        self.resolved.clear()
        self.loaded.clear()


def _plain_array_nbytes(value):
    """The bytes of ``value`` if it is exactly a NumPy array whose dtype holds no Python objects, else -1."""
    np = sys.modules.get("numpy")
    if np is None or type(value) is not np.ndarray or value.dtype.hasobject:
        return -1
    return value.nbytes


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


def _run(state, fn, args, oids, seconds):
    """Runs a batch; returns ``[(key, res_info, failed)]`` as ``get_async`` expects them (results encoded for the
    scheduler), and puts each task's own run time, measured here, in ``seconds`` (key -> seconds): the caller's
    clock would count the time a batch waited in the queue, and ~0 for a continuation (``depot.dask.Cache``
    scores results by it)."""
    from dask.local import batch_execute_tasks
    state.batch_oids = oids
    with running(state.task_context(oids)):
        timed = _timed(fn, args, batch_execute_tasks)
    out = []
    for key, res_info, failed, took in timed:
        seconds[key] = took
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


def _timed(fn, args, batch_execute_tasks):
    """``[(key, res_info, failed, seconds)]`` of a batch, each task's own run time measured."""
    timed = []
    if fn is batch_execute_tasks:
        for a in args:  # one at a time, as batch_execute_tasks runs them, to time each
            started = time.perf_counter()
            (key, res_info, failed), = fn([a])
            timed.append((key, res_info, failed, time.perf_counter() - started))
    else:
        started = time.perf_counter()
        done = fn(args)
        share = (time.perf_counter() - started) / max(1, len(done))
        timed = [(key, res_info, failed, share) for key, res_info, failed in done]
    return timed


def _continue(state, chain, seconds):
    """Runs the continuations a batch came with (``_continuations.chain``): ``[(key, (task, inputs), raw id)]``,
    each a dependent of the one before (the first of the batch's task), in order, while every input each refers
    to is held here (a batch given back and run elsewhere finds them held by another worker, and runs none);
    returns their results as ``(key, result, failed, True)``, with their run times in ``seconds``. The scheduler
    keeps them until ``get_async`` submits those keys."""
    from dask.local import batch_execute_tasks
    hooks = task_hooks()
    out = []
    for key, task_info, raw in chain:
        inputs = task_info[1] or {}
        if any(isinstance(v, Held) and (v.holder != state.pid or bytes(v.oid) not in state.held)
               for v in inputs.values()):
            break
        (key, res_info, failed), = _run(state, batch_execute_tasks, [(key, task_info) + hooks], {key: raw}, seconds)
        out.append((key, res_info, failed, True))
        if failed:
            break
    return out


def run():
    """The entry point of a worker process: ``python -c "from depot.dask._worker import run; run()" FD DIR
    INLINE_BYTES VERSION``, FD being its end of a socket pair to the scheduler and VERSION the pool's
    ``_transport.PROTOCOL_VERSION``."""
    import json
    import multiprocessing.connection
    for entry in json.loads(os.environ.pop(_transport.SYS_PATH_ENV_NAME, "[]")):
        if entry not in sys.path:
            sys.path.append(entry)
    fd, directory, inline_bytes, version = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    os.set_inheritable(fd, False)
    main(multiprocessing.connection.Connection(fd), directory, inline_bytes, version)


def main(conn, directory, inline_bytes, version=_transport.PROTOCOL_VERSION):
    """The worker's life: check the pool's protocol ``version``, connect, say ready, run batches until told to stop
    or the scheduler goes away."""
    global _state
    mismatch = _transport.version_mismatch(version)
    if mismatch is not None:
        conn.send_bytes(_transport.encode(Failed(mismatch)))
        return
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
        conn.send_bytes(_transport.encode(Failed(traceback.format_exc())))
        return
    _keep_freed_memory()
    # the reader thread answers a publish while a task holds the GIL: it waits at most this long for it
    sys.setswitchinterval(SWITCH_INTERVAL_SECONDS)
    _state = _WorkerState(client, inline_bytes)
    functions = FunctionTable()
    batches = _BatchQueue()
    send = _Sender(conn)
    reader = threading.Thread(target=_read, args=(conn, send, _state, batches), name="depot-dask-reader",
                              daemon=True)
    reader.start()
    send(_transport.encode(Ready(os.getpid(), _transport.PROTOCOL_VERSION)))
    try:
        while True:
            item = batches.get()
            if item is None:
                break
            message, batch, taken_back = item
            try:
                if type(batch) is not RunBatch:
                    raise TypeError("a message of kind %s where a batch was expected" % type(batch).__name__)
                batch_id = batch.batch_id
                functions.update(batch.definitions, batch.forget)  # the scheduler counts on them, taken back or not
                if taken_back:
                    continue
                fn, args, oids = functions.loads(batch.body)
                fn, args = expand(fn, args)
                then = functions.loads(batch.then) if batch.then is not None else ()
                del batch
            except BaseException:
                # cannot even read the batch (a function pickled by reference that this process cannot
                # import, say): say so instead of dying
                send(_transport.encode(Unreadable(_transport.batch_id_of(message), traceback.format_exc())))
                continue
            del message, item
            seconds = {}
            out = _run(_state, fn, args, oids, seconds)
            if then and not any(failed for _, _, failed in out):
                out.extend(_continue(_state, then, seconds))
            del args, then
            reply = _transport.encode(Results(batch_id, out, seconds))
            del out
            _state.finish_batch()
            try:
                send(reply)
            except (BrokenPipeError, OSError):
                break
    finally:
        client.close()
        sys.stdout.flush()


#: the interpreter's switch interval in a worker (Python's default is 5 ms): how long a publish request waits for a
#: running task to let go of the GIL. Only matters while two threads want the GIL, so rarely.
SWITCH_INTERVAL_SECONDS = 0.001

#: glibc's mallopt parameters (malloc.h) and what a worker sets them to
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD_BYTES = 32 << 20   # glibc's largest
TRIM_THRESHOLD_BYTES = 512 << 20


def _keep_freed_memory():
    """Large results stay in the worker's memory (``Held``), many at a time, so glibc would give most of them
    fresh pages (mmap) and return them at free: a first touch of each page costs ~10-17 us of CPU on a VM, ~25 ms
    per 8 MiB array. Allocations up to 32 MiB come from the heap instead, and up to 512 MiB of freed heap stays
    mapped for the next ones (glibc only; elsewhere nothing changes)."""
    try:
        import ctypes
        libc = ctypes.CDLL(None)
        libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)
        libc.mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES)
    except (OSError, AttributeError):
        pass


class _Sender:
    """The worker's end of the pipe, for the main thread's results and the reader thread's answers."""

    def __init__(self, conn):
        self._conn = conn
        self._lock = threading.Lock()

    def __call__(self, data):
        with self._lock:
            self._conn.send_bytes(data)


class _BatchQueue:
    """Batches the reader thread received, ``(frame, RunBatch or None if unreadable, taken back)``, for the main
    thread; the scheduler may take a batch back (``Unqueue``) until the main thread starts it."""

    def __init__(self):
        self._items = collections.deque()
        self._ready = threading.Condition()

    def put(self, item):
        with self._ready:
            self._items.append(item)
            self._ready.notify()

    def get(self):
        with self._ready:
            while not self._items:
                self._ready.wait()
            return self._items.popleft()

    def unqueue(self, batch_id):
        """True if batch ``batch_id`` had not been started: it is marked taken back (the main thread still
        loads the functions its message defines, and runs nothing).

        A batch given back can come back to this worker and be asked back again while the copy given back the
        first time still waits here, marked: only a copy not given back yet answers (otherwise the copy sent
        later would run here and again wherever the pool sends it next)."""
        with self._ready:
            for i, item in enumerate(self._items):
                if item is not None and item[1] is not None and item[1].batch_id == batch_id and not item[2]:
                    self._items[i] = (item[0], item[1], True)
                    return True
        return False


def _read(conn, send, state, batches):
    """The reader thread: publish, drop and unqueue requests at once, batches to the main thread, None at the
    end."""
    try:
        while True:
            try:
                message = conn.recv_bytes()
            except (EOFError, OSError):
                break
            try:
                request = _transport.decode(message)
            except BaseException:
                batches.put((message, None, False))  # the main thread reports it
                continue
            kind = type(request)
            if kind is RunBatch:
                if request.drops:
                    state.drop(request.drops)
                batches.put((message, request, False))
            elif kind is Publish:
                state.publish(request.raws)
            elif kind is Drop:
                state.drop(request.raws)
            elif kind is DropPrefix:
                state.drop_prefix(request.prefix)
            elif kind is Unqueue:
                if batches.unqueue(request.batch_id):
                    send(_transport.encode(Unqueued(request.batch_id)))
            else:  # Stop
                break
    finally:
        batches.put(None)
