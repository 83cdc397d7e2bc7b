"""The scheduler's worker processes: spawned, each with its own Depot client, fed batches over a pipe. While a
compute runs, the thread that runs it receives the workers' results itself (``Pool.next_finished``, through the
``_Ticket`` each submit returns); between computes a collector thread does, and notices deaths.

Every object a worker stores has an id the pool chose before sending the batch (the scheduler's token, the
compute's number, a counter), so whatever a dead or cancelled worker left behind can be found and deleted.
"""

import collections
import concurrent.futures
import itertools
import json
import multiprocessing
import multiprocessing.connection
import os
import queue
import select
import signal
import socket
import subprocess
import sys
import threading
import time
import weakref

from depot.ids import ID_LENGTH, ObjectId

from . import _transport, _worker
from ._functions import ComputeFunctions, SentFunctions, dumps_task
from ._refs import Held, Stored
from ._transport import (Drop, DropPrefix, Failed, Publish, Ready, Results, RunBatch, Stop, Unqueue, Unqueued,
                         Unreadable)

TOKEN_LENGTH = 8
COMPUTE_LENGTH = 4
PREFIX_LENGTH = TOKEN_LENGTH + COMPUTE_LENGTH
COUNTER_LENGTH = ID_LENGTH - PREFIX_LENGTH

START_TIMEOUT = 120.0
STOP_TIMEOUT = 10.0
#: a worker whose pipe closed is given this long to exit before it is killed: it can run nothing more, and the
#: thread that saw it go (a compute's own) waits for it before the compute hears of its tasks
DIED_GRACE_SECONDS = 1.0


class WorkerDiedError(RuntimeError):
    """A worker process died while it ran a task (killed, out of memory, a crash in native code)."""


class WorkerTaskError(RuntimeError):
    """A worker could not read the tasks it was sent (a function it cannot import, say)."""


class WorkerStartError(RuntimeError):
    """A worker process could not start or could not connect to the store."""


#: the computes running in this process, by id prefix (for ``fetch_held``)
_running = weakref.WeakValueDictionary()


def fetch_held(held):
    """A ``Held`` result of a compute running in this process (a callback's view of a result), read zero-copy."""
    compute = _running.get(bytes(held.oid)[:PREFIX_LENGTH])
    if compute is None:
        raise KeyError("%r belongs to no depot.dask compute running in this process" % (held,))
    return compute.pool.fetch(compute, held)


class Compute:
    """One call of the scheduler: its id prefix, its objects' pins, and whether it was abandoned."""

    def __init__(self, pool, number):
        self.pool = pool
        self.prefix = pool.token + number.to_bytes(COMPUTE_LENGTH, "little")
        _running[self.prefix] = self
        self._counter = itertools.count(1)
        self.abandoned = False
        self.functions = ComputeFunctions()
        #: raw ids of held results their holders were asked to store in Depot
        self.published = set()
        #: ``get_async``'s graph, dependents (key -> keys that need it) and dependencies (key -> keys it needs), once
        #: its start-state callback has run
        self.dsk = None
        self.dependents = None
        self.dependencies = None
        #: ``get_async``'s cache (the scheduler's ``_Results``: key -> what travels for its result), and its
        #: tasks per batch; continuations only for batches of one
        self.results = None
        self.chunksize = None
        #: continuations (``Pool._continuations``) sent: key -> raw id; and those that ran: key -> ``(result,
        #: failed)``, until ``get_async`` submits the key
        self.continued = {}
        self.precomputed = {}
        #: key -> seconds its task ran in a worker, as the worker measured it (``task_seconds``)
        self.task_seconds = {}
        #: key -> ``(pid, raw id)``: the worker its batch, or the batch it is a continuation of, went to last, and
        #: the id of its result there
        self.sent = {}
        #: placement: key -> pid of the worker that claimed it (it ran the first placed input of it, or of one of
        #: its inputs)
        self.homes = {}
        #: placement of the tasks ready at the start: key -> index of the worker whose share of them it is
        #: (``split_roots``)
        self.roots = {}
        #: ``get_async``'s list of tasks ready and not yet submitted (its ``state["ready"]``), once its start-state
        #: callback has run; read here only for its length
        self.unsubmitted = None
        #: batches that ended, as ``(results, None)`` or ``(None, exception)``, for the compute's tickets
        self.finished = collections.deque()

    def split_roots(self, ready, workers, chunksize):
        """Gives each of ``workers`` workers a contiguous share of the tasks ready at the start (``get_async``'s
        ``state["ready"]``: a list it pops from the end, the most urgent last), and reorders ``ready`` in place so
        that ``get_async`` submits the shares' first tasks side by side, ``chunksize`` at a time.

        Dask orders a tree's leaves depth first, so a contiguous share of them is a subtree: each worker computes
        its own subtree, with its combines, and only the combines above the shares move a result between
        workers. Without shares the workers took leaves as they freed up and met at every family's border
        (~9 results moved per compute of benchmark case (a), against one for two halves). Tasks that become ready
        later are appended by ``get_async`` and come first, as before (depth first, so memory stays bounded)."""
        if not isinstance(ready, list) or workers < 2 or len(ready) < 2:
            return
        urgent_first = ready[::-1]
        n = len(urgent_first)
        shares = [urgent_first[i * n // workers:(i + 1) * n // workers] for i in range(workers)]
        for i, share in enumerate(shares):
            for key in share:
                self.roots[key] = i
        side_by_side = []
        for start in range(0, max(len(share) for share in shares), chunksize):
            for share in shares:
                side_by_side.extend(share[start:start + chunksize])
        ready[:] = side_by_side[::-1]

    def new_oid(self):
        return ObjectId(self.prefix + next(self._counter).to_bytes(COUNTER_LENGTH, "little"))

    def owns(self, oid):
        return bytes(oid)[:PREFIX_LENGTH] == self.prefix

    def home_of(self, key):
        """The pid of the worker that claimed the nearest of ``key``'s dependents, or of their dependents
        (``HOME_LEVELS``), or None: the worker of its family."""
        level = self._dependents_of([key])
        for _ in range(HOME_LEVELS):
            for d in level:
                pid = self.homes.get(d)
                if pid is not None:
                    return pid
            level = self._dependents_of(level)
        return None

    def placed(self, key, pid):
        """``key`` runs on worker ``pid``: its dependents, and theirs (``HOME_LEVELS``), that no worker claimed yet
        are claimed by that one."""
        level = self._dependents_of([key])
        for _ in range(HOME_LEVELS):
            for d in level:
                self.homes.setdefault(d, pid)
            level = self._dependents_of(level)

    def _dependents_of(self, keys):
        if self.dependents is None:
            return []
        out = []
        for key in keys:
            out.extend(itertools.islice(self.dependents.get(key, ()), HOME_DEPENDENTS_LOOKED_AT))
        return out


class _Batch:
    """Tasks sent to a worker in one message: ``body`` and ``used`` are its pickle and the by-value functions it
    refers to (kept after it is sent: a batch given back goes to another worker), ``worker`` is where it went."""

    __slots__ = ("id", "compute", "keys", "oids", "held", "body", "used", "ended", "worker", "taking_back",
                 "continued")

    def __init__(self, batch_id, compute, keys, oids, held, body, used):
        self.id = batch_id
        self.compute = compute
        self.keys = keys
        self.oids = oids
        self.held = held
        self.body = body
        self.used = used
        #: its results or its failure went to its compute (``Pool._end``)
        self.ended = False
        self.worker = None
        #: its worker was asked to give it back (``unqueue``) and has not answered yet
        self.taking_back = False
        #: the keys of the continuations sent with it
        self.continued = ()


class _Ticket:
    """What ``Pool.submit`` returns to ``dask.local.get_async`` for a batch, in place of a future.

    ``get_async`` (both supported versions) hands each submitted future's ``add_done_callback`` its queue's
    ``put``, takes one item out of that queue per batch and iterates over ``item.result()``: the keys, results
    and failures of a batch, each naming its key. A ticket goes into the queue at once, and its ``result()``
    returns the results of the next batch of its compute to end, whichever that is, receiving them from the
    workers in the calling thread (``Pool.next_finished``). One ticket per batch, so every batch's results are
    returned once, as they end; and no other thread stands between a worker's answer and ``get_async``: with a
    collector thread completing futures, each result crossed two threads (a wake-up and a GIL hand-over each,
    on the cores the workers compute on) before ``get_async`` saw it."""

    __slots__ = ("_pool", "_compute")

    def __init__(self, pool, compute):
        self._pool = pool
        self._compute = compute

    def add_done_callback(self, fn):
        fn(self)

    def result(self, timeout=None):
        return self._pool.next_finished(self._compute, timeout)

    def done(self):
        return bool(self._compute.finished)


class _Worker:
    """A worker process started with ``subprocess`` (so the caller's main module is never re-imported, as
    multiprocessing's spawn would), talking over a socket pair; its death shows as the end of the pipe and on a
    pidfd."""

    def __init__(self, directory, inline_bytes, index):
        self.index = index
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        env = dict(os.environ)
        env[_worker.SYS_PATH_ENV_NAME] = json.dumps(sys.path)
        package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env["PYTHONPATH"] = package_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-c", "from depot.dask._worker import run; run()",
                 str(theirs.fileno()), directory, str(inline_bytes), str(_transport.PROTOCOL_VERSION)],
                pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, env=env, start_new_session=False)
        finally:
            theirs.close()
        self.conn = multiprocessing.connection.Connection(ours.detach())
        self.pid = self.process.pid
        try:
            self.sentinel = os.pidfd_open(self.pid)
        except (AttributeError, OSError):
            self.sentinel = None
        self.inflight = {}
        # raw ids of held results to forget, sent with the next message (under send_lock)
        self.pending_drops = []
        # the by-value functions its table holds; messages are pickled against it and sent in its order
        self.sent = SentFunctions()
        self.send_lock = threading.Lock()
        self.alive = True
        self.ready = threading.Event()
        self.gone = threading.Event()
        self.start_error = None

    def exitcode(self, timeout):
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self):
        if self.process.poll() is None:
            try:
                self.process.kill()
            except ProcessLookupError:
                pass

    def close_handles(self):
        self.conn.close()
        if self.sentinel is not None:
            try:
                os.close(self.sentinel)
            except OSError:
                pass
            self.sentinel = None


#: placement of a task without held inputs looks at no more than this many of its dependents (a task that
#: feeds thousands would otherwise cost thousands of lookups), and at theirs: a worker that starts a family claims
#: its parent and grandparent, so that another worker starts the next grandparent's family, not the sibling
#: family (which would move an input at each combine of the second level)
HOME_DEPENDENTS_LOOKED_AT = 4
HOME_LEVELS = 2
#: a worker with room looks for a batch that prefers it among no more than this many queued ones
PENDING_LOOKED_AT = 32
#: a batch of one task carries at most this many continuations (``Pool._continuations``)
CONTINUATION_DEPTH = 8


def _held_inputs(fn, args):
    """The ``Held`` inputs of a batch as ``get_async`` submits it (``batch_execute_tasks`` of ``(key, (task,
    data), ...)``)."""
    from dask.local import batch_execute_tasks
    if fn is not batch_execute_tasks:
        return []
    out = []
    for a in args:
        try:
            data = a[1][1]
        except (IndexError, TypeError):
            continue
        if isinstance(data, dict):
            out.extend(v for v in data.values() if isinstance(v, Held))
    return out


class _Poller:
    """The receiving thread's ``poll`` set: the wake-up pipe and each live worker's pipe and pidfd, registered once and
    again only when the workers change (``multiprocessing.connection.wait`` builds and registers a new selector
    for every wait, once per message here)."""

    CONN = "conn"
    SENTINEL = "sentinel"

    def __init__(self, wake_fd):
        self._wake_fd = wake_fd
        self._key = None
        self._poll = None
        self._by_fd = {}

    def wait(self, workers, timeout=None):
        """``[(worker, CONN | SENTINEL)]`` ready among ``workers`` (blocking, or for at most ``timeout`` seconds),
        ``(None, None)`` for the pipe."""
        # the workers themselves too: a replacement's descriptors may reuse a dead worker's numbers
        key = tuple((w, w.conn.fileno(), w.sentinel) for w in workers)
        if key != self._key:
            self._poll = select.poll()
            self._by_fd = {self._wake_fd: (None, None)}
            for w, conn_fd, sentinel in key:
                self._by_fd[conn_fd] = (w, self.CONN)
                if sentinel is not None:
                    self._by_fd[sentinel] = (w, self.SENTINEL)
            for fd in self._by_fd:
                self._poll.register(fd, select.POLLIN)
            self._key = key
        # retried on EINTR by Python itself (PEP 475)
        ready = self._poll.poll(None if timeout is None else max(0, int(timeout * 1000)))
        # any event counts (POLLHUP, POLLERR: the read that follows says what happened)
        return [self._by_fd[fd] for fd, _ in ready if fd in self._by_fd]


class Pool:
    def __init__(self, size, directory, inline_bytes, client, depth=2):
        if size < 1:
            raise ValueError("a pool needs at least one worker, got %d" % size)
        self.size = size
        self.depth = depth
        #: batches submitted and not yet sent, in Dask's order
        self._pending = collections.deque()
        #: held results whose holders were asked to store them in Depot, and batches given back by the worker
        #: they waited on for an idle one, in all (tests, figures)
        self.published_count = 0
        self.taken_back_count = 0
        self.continuations_used_count = 0
        self.directory = directory
        self.inline_bytes = inline_bytes
        self.client = client
        self.token = os.urandom(TOKEN_LENGTH)
        self._lock = threading.Lock()
        #: the thread receiving from the workers now (``_receive_until``), or None; while a compute runs, one of
        #: the threads running computes, else the collector
        self._receiver = None
        self._computes_running = 0
        #: compute threads wait here for their batches to end or for the receiving role to be free
        self._turn = threading.Condition(self._lock)
        #: the collector waits here for no compute to run
        self._quiet = threading.Condition(self._lock)
        self._computes = itertools.count(1)
        self._batches = itertools.count(1)
        self._indexes = itertools.count(0)
        self._closing = False
        self._wake_r, self._wake_w = os.pipe()
        self._poller = _Poller(self._wake_r)
        #: set by the thread that writes a wake-up byte, cleared by the receiver after it drained the pipe (under
        #: the lock): while set, later submits rely on that byte
        self._wake_pending = False
        # releases and deletes go through this thread, off the scheduling loop (a delete is a daemon request)
        self._discards = queue.Queue()
        self._discarder = threading.Thread(target=self._discard_loop, name="depot-dask-discarder", daemon=True)
        self._discarder.start()
        self.workers = [self._spawn() for _ in range(size)]
        self._collector = threading.Thread(target=self._collect, name="depot-dask-collector", daemon=True)
        self._collector.start()
        try:
            for w in list(self.workers):
                self._await_ready(w)
        except BaseException:
            self.close()
            raise

    # ---- workers --------------------------------------------------------------------------------------

    def _spawn(self):
        return _Worker(self.directory, self.inline_bytes, next(self._indexes))

    def _await_ready(self, w):
        if not w.ready.wait(START_TIMEOUT) or w.start_error is not None:
            raise WorkerStartError("depot.dask worker %d did not start%s" % (
                w.pid, ": " + w.start_error if w.start_error else " within %d s" % START_TIMEOUT))

    def _wake(self):
        try:
            os.write(self._wake_w, b"x")
        except OSError:
            pass

    def pids(self):
        with self._lock:
            return [w.pid for w in self.workers]

    # ---- submitting -----------------------------------------------------------------------------------

    def new_compute(self):
        """A compute whose thread receives its results (``next_finished``) until ``retire``: the collector stops
        receiving."""
        compute = Compute(self, next(self._computes))
        with self._lock:
            self._computes_running += 1
            wake = self._receiver is not None
        if wake:
            self._wake()  # the collector, in poll: it gives the receiving role up
        return compute

    def retire(self, compute):
        """``compute``'s thread no longer receives: the collector does again once no compute runs."""
        with self._lock:
            self._computes_running -= 1
            if not self._computes_running:
                self._quiet.notify()

    def submit(self, compute, fn, args):
        """Queues a batch (``fn(args)``, as ``dask.local.get_async`` submits it) for the next worker with a free
        place (see ``_dispatch``); returns its ``_Ticket``."""
        keys = [a[0] for a in args]
        if len(keys) == 1 and keys[0] in compute.precomputed:
            return self._precomputed(compute, keys[0])
        oids = {key: bytes(compute.new_oid()) for key in keys}
        held = _held_inputs(fn, args)
        # pickled here, so that a task that cannot be pickled fails its compute at once, in the caller's thread
        body, used = dumps_task((*_worker.compact(fn, args), oids), compute.functions)
        batch = _Batch(next(self._batches), compute, keys, oids, held, body, used)
        with self._lock:
            if self._closing:
                raise RuntimeError("this depot.dask Scheduler is closed")
            if not any(w.alive for w in self.workers):
                raise WorkerDiedError("no depot.dask worker is alive")
            self._pending.append(batch)
            # sent by the next thread to receive (it dispatches first): get_async's own thread when it asks for
            # results, after it has submitted all it can at this point, so that the choice sees them all (at the
            # start, the first workers x depth x 2 leaves). Only another thread that receives now (a concurrent
            # compute's) is woken, once for all the batches submitted before it gets to them, and only when some
            # worker has room: a place frees only in the receiving thread (a result, a batch given back, a
            # death), which dispatches right after, and sees this batch then
            wake = (self._receiver is not None and self._receiver != threading.get_ident()
                    and not self._wake_pending
                    and any(w.alive and len(w.inflight) < self.depth for w in self.workers))
            if wake:
                self._wake_pending = True
        if wake:
            self._wake()
        return _Ticket(self, compute)

    def _precomputed(self, compute, key):
        """The ticket of a task a worker has run already, as a continuation: its batch ends at once."""
        with self._lock:
            result, failed = compute.precomputed.pop(key)
            compute.continued.pop(key, None)
        batch = _Batch(next(self._batches), compute, [key], {}, [], b"", {})
        self.continuations_used_count += 1
        self._end(batch, [(key, result, failed)])
        return _Ticket(self, compute)

    def _continuations(self, compute, batch, w):
        """``[(key, (task, inputs), raw id)]``: the dependents ``w`` can run right after ``batch`` without another
        message (under the lock). Each is the only dependent of the one before (the first, of the batch's task),
        and each of its inputs is that one, or a result ``w`` holds (computed before, or by a continuation that
        ran or is queued there), or one any worker can read. The worker runs them while it still holds their
        inputs (``_worker._continue``) and sends their results with the batch's; ``submit`` hands them to
        ``get_async`` when it submits those keys.

        A tree's combine whose other input is already on the same worker is run there at once: the worker
        does not wait for the scheduler's round trip between a leaf and each combine above it (four levels of
        a share of 16 leaves, at the end of the tree), and the scheduler sends no message for it."""
        if (compute.dsk is None or compute.dependencies is None or compute.results is None
                or compute.chunksize != 1 or len(batch.keys) != 1):
            return []
        done = compute.results  # get_async's cache (read only)
        key = batch.keys[0]
        here = {key: Held(batch.oids[key], 0, w.pid)}
        chain = []
        for _ in range(CONTINUATION_DEPTH):
            up = compute.dependents.get(key, ())
            if len(up) != 1:
                break
            (d,) = up
            if d in compute.continued or d in compute.precomputed or d not in compute.dsk:
                break
            inputs = {}
            for k in compute.dependencies.get(d, ()):
                ref = here.get(k)
                if ref is None:
                    ref = self._readable_on(compute, k, w, done)
                if ref is None:
                    break
                inputs[k] = ref
            else:
                raw = bytes(compute.new_oid())
                chain.append((d, (compute.dsk[d], inputs), raw))
                compute.continued[d] = raw
                here[d] = Held(raw, 0, w.pid)
                key = d
                continue
            break
        return chain

    @staticmethod
    def _readable_on(compute, key, w, done):
        """What a continuation on ``w`` gets for its input ``key``: its result if ``w`` holds it or any worker can
        read it, a reference to it if a batch or a continuation sent to ``w`` makes it, else None."""
        if key in compute.precomputed:
            (value, _), failed = compute.precomputed[key]  # as a worker sent it: ((result, worker pid), failed)
            if failed:
                return None
        elif key in done:
            value = done[key]
        else:
            # queued or running on ``w``: it runs before (a worker runs its batches in the order sent)
            pid, raw = compute.sent.get(key, (None, None))
            return Held(raw, 0, w.pid) if pid == w.pid else None
        if isinstance(value, Held):
            return value if value.holder == w.pid else None
        return value

    def _dispatch(self):
        """Sends queued batches while some worker has fewer than ``depth`` in flight (in the receiving thread:
        before it polls, when a batch ends and when a worker is replaced), each with its continuations
        (``_continuations``). The worker with fewest in flight
        chooses first: it takes the first queued batch that prefers it; else a batch goes to the worker it
        prefers if that one has room (and is idle too, when the chooser is); else the chooser takes the first
        that prefers no worker, or, when it is idle, the first (no worker idles while a batch waits). Otherwise
        the batches wait for the full worker they prefer, or for a worker to become idle.

        A batch prefers the worker holding most of its inputs' bytes, or, with no held inputs, its family's worker
        (``Compute.home_of``). Binding a batch to a worker only when that worker has room keeps families
        together: Dask orders a tree's leaves depth first (``a0, a1, combine(a0, a1), a2, ...``), and
        placing each leaf on the worker expected free first would alternate siblings between the workers, so
        that half of all combines moved an input (``dask.distributed`` co-assigns root tasks for the same
        reason)."""
        while True:
            with self._lock:
                choice = self._choose()
                if choice is None:
                    take_back = self._take_back_for_idle()
                    break
                w, batch = choice
                w.inflight[batch.id] = batch
                batch.worker = w
                batch.compute.placed(batch.keys[0], w.pid)
                chain = self._continuations(batch.compute, batch, w)
                batch.continued = tuple(d for d, _, _ in chain)
                for key in batch.keys:
                    batch.compute.sent[key] = (w.pid, batch.oids[key])
                for key, _, raw in chain:
                    batch.compute.sent[key] = (w.pid, raw)
                    batch.compute.placed(key, w.pid)
                publish = self._to_publish(batch.compute, w, batch.held)
            then, then_used = dumps_task(chain, batch.compute.functions) if chain else (None, {})
            for holder, raws in publish.items():
                self._send(holder, Publish(raws))
            with w.send_lock:
                definitions, forget = w.sent.delta({**batch.used, **then_used}, batch.compute.functions)
                drops, w.pending_drops = w.pending_drops, []
                message = _transport.encode(RunBatch(batch.id, definitions, forget, batch.body, drops, then))
                try:
                    w.conn.send_bytes(message)
                except OSError:
                    pass  # the worker died: the receiving thread fails the batch
        if take_back is not None:
            self._send(*take_back)

    def _take_back_for_idle(self):
        """``(worker, Unqueue(batch id))`` when a worker is idle, nothing is queued here and another worker
        has a batch waiting behind its running one (it is given back and goes to the idle worker: at the end of
        a graph, the last leaf would otherwise wait for its worker's running one while the other worker idles);
        else None (under the lock)."""
        if self._pending or not any(w.alive and not w.inflight for w in self.workers):
            return None
        busiest = max((w for w in self.workers if w.alive), key=lambda x: len(x.inflight))
        if len(busiest.inflight) < 2:
            return None
        batch = list(busiest.inflight.values())[-1]  # the last sent: the one that waits
        if batch.taking_back or batch.compute.unsubmitted:
            # get_async has tasks ready that it has not submitted yet: it will as soon as it has taken in the result
            # that made this worker idle, and the worker takes one of those. Taken back now, a batch of the other
            # worker's share would move its results between the workers (two of every three computes of
            # benchmark case (a) lost their shares that way, when a collector thread received the results and was
            # faster than get_async's thread; with the receiving in get_async's thread, a concurrent compute's
            # thread or the collector between computes can still be)
            return None
        batch.taking_back = True
        return busiest, Unqueue(batch.id)

    def _choose(self):
        """``(worker, batch)`` to send next, taken off the queue, or None (under the lock)."""
        if not self._pending:
            return None
        free = {w.pid: w for w in self.workers if w.alive and len(w.inflight) < self.depth}
        if not free:
            return None
        least = min(free.values(), key=lambda x: len(x.inflight))
        idle = not least.inflight
        neutral = elsewhere = shared_only = None
        for i, batch in enumerate(itertools.islice(self._pending, PENDING_LOOKED_AT)):
            preferred, by_share = self._preference(batch)
            if preferred == least.pid:
                return least, self._take(i)
            if preferred is None:
                neutral = i if neutral is None else neutral
            else:
                if elsewhere is None and preferred in free and (not free[preferred].inflight or not idle):
                    elsewhere = (free[preferred], i)
                if by_share and shared_only is None:
                    shared_only = i
        if elsewhere is not None:
            return elsewhere[0], self._take(elsewhere[1])
        if neutral is not None:
            return least, self._take(neutral)
        if idle:
            # a task of another worker's share whose family no worker has started moves nothing when taken (its
            # family follows it here); the first queued batch may be the sibling of one the other worker runs
            return least, self._take(0 if shared_only is None else shared_only)
        return None  # what is queued waits for the full worker it prefers, or for a worker to become idle

    def _take(self, i):
        batch = self._pending[i]
        del self._pending[i]
        return batch

    def _preferred(self, batch):
        """The pid of the worker ``batch`` would rather run on, or None (``_preference``)."""
        return self._preference(batch)[0]

    def _preference(self, batch):
        """``(pid, by_share)``: the worker ``batch`` would rather run on, or None: the one holding most bytes of its
        inputs that are not in Depot yet (one that is can be read anywhere), else its family's (a worker runs
        one of its dependents' inputs), else, for a task ready at the start, its share's worker (``by_share``
        True: nothing of it is anywhere yet, so any worker may take it at no cost)."""
        published = batch.compute.published
        by_holder = {}
        for h in batch.held:
            if bytes(h.oid) not in published:
                by_holder[h.holder] = by_holder.get(h.holder, 0) + h.nbytes
        if by_holder:
            return max(by_holder, key=by_holder.get), False
        key = batch.keys[0]
        family = batch.compute.home_of(key)
        if family is not None:
            return family, False
        share = batch.compute.roots.get(key)
        if share is not None and share < len(self.workers) and self.workers[share].alive:
            return self.workers[share].pid, True
        return None, False

    def _to_publish(self, compute, w, held):
        """``{holder worker: [raw ids]}``: the inputs in ``held`` that ``w`` does not hold and that their holders
        were not asked for yet (marked asked)."""
        out = {}
        for h in held:
            raw = bytes(h.oid)
            if h.holder == w.pid or raw in compute.published:
                continue
            holder = self._alive_by_pid(h.holder)
            if holder is None:
                continue  # died: the task waiting for it says so
            compute.published.add(raw)
            self.published_count += 1
            out.setdefault(holder, []).append(raw)
        return out

    def _alive_by_pid(self, pid):
        for w in self.workers:
            if w.pid == pid and w.alive:
                return w
        return None

    def _send(self, w, message):
        data = _transport.encode(message)
        with w.send_lock:
            try:
                w.conn.send_bytes(data)
            except OSError:
                pass

    def fetch(self, compute, held):
        """A held result read in this process: its holder is asked to store it in Depot (once), then it is read
        zero-copy from there."""
        with self._lock:
            holder = self._alive_by_pid(held.holder)
            raw = bytes(held.oid)
            ask = holder is not None and raw not in compute.published
            if ask:
                compute.published.add(raw)
                self.published_count += 1
        if ask:
            self._send(holder, Publish([raw]))
        return _worker.await_published(self.client, held)

    def release_held(self, compute, held):
        """No task needs ``held`` any more: its holder forgets it (with its next message, or at the end of the
        compute), and its copy in Depot, if it was published, is deleted. A published one is forgotten at once:
        its holder's view pins the copy in the store, which is freed only when that pin goes."""
        raw = bytes(held.oid)
        with self._lock:
            w = self._alive_by_pid(held.holder)
            published = raw in compute.published
        if w is not None:
            if published:
                self._send(w, Drop([raw]))
            else:
                with w.send_lock:
                    w.pending_drops.append(raw)
        if published:
            self._discards.put((None, held.oid, True))

    def end_compute(self, compute):
        """Every worker forgets what it holds of ``compute``."""
        with self._lock:
            workers = [w for w in self.workers if w.alive]
        for w in workers:
            with w.send_lock:
                w.pending_drops = []
            self._send(w, DropPrefix(compute.prefix))

    # ---- receiving: a compute's thread, or the collector thread between computes --------------------------

    def next_finished(self, compute, timeout=None):
        """The results of the next batch of ``compute`` to end (its ``_Ticket``'s ``result()``), received in this
        thread unless another one receives now; raises the batch's failure."""
        deadline = None if timeout is None else time.monotonic() + timeout
        ended = self._receive_until(lambda: compute.finished.popleft() if compute.finished else None, deadline)
        if ended is None:
            raise concurrent.futures.TimeoutError("no batch of the compute ended within %s s" % timeout)
        body, error = ended
        if error is not None:
            raise error
        return body

    def _receive_until(self, ready, deadline=None):
        """Receives from the workers in this thread, or waits while another thread does, until ``ready()`` (called
        under the lock) returns something other than None, which is returned; None at ``deadline``."""
        me = threading.get_ident()
        while True:
            with self._lock:
                got = ready()
                if got is not None:
                    return got
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return None
                if self._receiver is not None:
                    self._turn.wait(remaining)
                    continue
                self._receiver = me
            try:
                self._receive_once(remaining)
            finally:
                self._give_up_receiving()

    def _give_up_receiving(self):
        with self._lock:
            self._receiver = None
            self._turn.notify_all()
            if not self._computes_running or self._closing:
                self._quiet.notify()

    def _collect(self):
        """The collector thread: receives while no compute runs (a worker's start, a death, the late results of
        an abandoned compute)."""
        me = threading.get_ident()
        while True:
            with self._lock:
                while self._receiver is not None or (self._computes_running and not self._closing):
                    self._quiet.wait()
                if self._closing and not any(w.alive for w in self.workers):
                    return
                self._receiver = me
            try:
                self._receive_once(None)
            finally:
                self._give_up_receiving()

    def _receive_once(self, timeout):
        """Sends what is queued, waits (``timeout`` seconds at most) for the workers and takes in what came: a
        wake-up, messages, deaths."""
        self._dispatch()
        with self._lock:
            workers = [w for w in self.workers if w.alive]
        for w, what in self._poller.wait(workers, timeout):
            if w is None:
                # drained first, then cleared: a submit that found the flag set between the two has its batch
                # queued already (the dispatch below sends it), one after the clear writes again. Cleared
                # first, a submit between the clear and the read left the flag set with its byte read, and
                # every later submit waited for a wake-up that never came (a compute hung)
                os.read(self._wake_r, 4096)
                with self._lock:
                    self._wake_pending = False
                self._dispatch()
                continue
            if not w.alive:
                continue
            if what == _Poller.CONN:
                try:
                    message = w.conn.recv_bytes()
                except (EOFError, OSError):
                    self._died(w)
                    continue
                self._received(w, message)
            else:
                self._died(w)

    def _received(self, w, data):
        message = _transport.decode(data)
        kind = type(message)
        if kind is Ready:
            mismatch = _transport.version_mismatch(message.version)
            if mismatch is not None:
                w.start_error = mismatch
            w.ready.set()
            return
        if kind is Failed:
            w.start_error = message.text
            w.ready.set()
            return
        if kind is Unqueued:
            with self._lock:
                batch = w.inflight.pop(message.batch_id, None)
                requeue = batch is not None and not batch.compute.abandoned and not self._closing
                if batch is not None:
                    for d in batch.continued:
                        batch.compute.continued.pop(d, None)
                    batch.continued = ()
                if requeue:
                    batch.taking_back = False
                    batch.worker = None
                    self._pending.appendleft(batch)
                    self.taken_back_count += 1
            if batch is not None and not requeue:
                self._end(batch, error=RuntimeError("batch of %s not run: its compute was abandoned"
                                                    % ", ".join(map(repr, batch.keys))))
            self._dispatch()
            return
        if kind is Unreadable:
            with self._lock:
                batch = w.inflight.pop(message.batch_id, None)
            if batch is not None:
                self._end(batch, error=WorkerTaskError(
                    "depot.dask worker %d could not read the batch of task%s %s:\n%s"
                    % (w.pid, "s" if len(batch.keys) > 1 else "", ", ".join(repr(k) for k in batch.keys),
                       message.text)))
                self._dispatch()
            return
        body = message.results
        with self._lock:
            batch = w.inflight.pop(message.batch_id, None)
        if batch is None:
            # results of a batch this worker no longer has in flight (it was given back and runs elsewhere): no
            # one will ask for what it holds of them, so it forgets them now, not at the end of the compute (a
            # held result can pin its inputs' memory, and a run that ends after the compute did is never told)
            raws = [bytes(e[1][0].oid) for e in body if not e[2] and isinstance(e[1][0], Held)
                    and e[1][0].holder == w.pid]
            if raws:
                self._send(w, Drop(raws))
            return
        self._dispatch()
        compute = batch.compute
        compute.task_seconds.update(message.seconds)
        if len(body) > len(batch.keys):
            # continuations' results come after the batch's own
            with self._lock:
                for key, result, failed, _ in body[len(batch.keys):]:
                    compute.precomputed[key] = (result, failed)
            body = body[:len(batch.keys)]
        if compute.abandoned:
            for _, res_info, failed in body:
                if not failed and isinstance(res_info[0], Stored) and compute.owns(res_info[0].oid):
                    self._delete(res_info[0].oid)
            self._send(w, DropPrefix(compute.prefix))
            self.sweep(compute.prefix)  # and what its tasks stored themselves (DataFrame shuffle slices)
        self._end(batch, body)

    def _end(self, batch, body=None, error=None):
        """Hands ``batch``'s results, or its failure, to its compute's tickets (once)."""
        with self._lock:
            if batch.ended:
                return
            batch.ended = True
            batch.compute.finished.append((body, error))
            self._turn.notify_all()

    def _died(self, w):
        code = w.exitcode(DIED_GRACE_SECONDS)
        if code is None:
            w.kill()
            code = w.exitcode(STOP_TIMEOUT)
        with self._lock:
            w.alive = False
            batches = list(w.inflight.values())
            w.inflight.clear()
            # a worker that died before it ever started is not replaced (it would die again, forever)
            if not self._closing and w.ready.is_set() and w.start_error is None:
                self.workers[self.workers.index(w)] = self._spawn()
        w.close_handles()
        # whatever the dead worker had stored for its unfinished tasks is not wanted by anyone
        for batch in batches:
            for oid in batch.oids.values():
                self._delete(oid)
        how = "was killed by signal %d" % -code if code is not None and code < 0 else "exited with status %s" % code
        for batch in batches:
            self._end(batch, error=WorkerDiedError(
                "depot.dask worker %d %s while running task%s %s; a new worker replaces it"
                % (w.pid, how, "s" if len(batch.keys) > 1 else "", ", ".join(repr(k) for k in batch.keys))))
        if not w.ready.is_set() and w.start_error is None:
            w.start_error = "it %s before connecting to the store" % how
        w.gone.set()
        w.ready.set()
        self._dispatch()  # to the new worker

    def _delete(self, oid):
        try:
            self.client.delete(oid)
        except Exception:
            pass

    def discard(self, view, oid, owned):
        """Releases ``view`` (a pin) and then, if ``owned``, deletes ``oid``, in the discarder thread."""
        self._discards.put((view, oid, owned))

    def drain(self):
        """Waits until every discard asked so far is done."""
        self._discards.join()

    def _discard_loop(self):
        while True:
            item = self._discards.get()
            try:
                if item is None:
                    return
                view, oid, owned = item
                try:
                    if view is not None:
                        view.release()
                    if owned:
                        self.client.delete(oid)
                except Exception:
                    pass  # the client or the daemon is gone; the sweep at close deletes what is left
            finally:
                self._discards.task_done()

    # ---- cancelling and closing -----------------------------------------------------------------------

    def abandon(self, compute, cancel):
        """After a failure or Ctrl-C: results still to come are deleted on arrival; with ``cancel`` the workers
        running this compute's tasks are killed (and replaced) so that nothing keeps running. Then every object
        of the compute is deleted."""
        compute.abandoned = True
        self._fail_pending(lambda b: b.compute is compute, "its compute was abandoned")
        victims = []
        if cancel:
            with self._lock:
                victims = [w for w in self.workers
                           if w.alive and any(b.compute is compute for b in w.inflight.values())]
            for w in victims:
                try:
                    os.kill(w.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            # their deaths are received here (the collector stays out while this compute runs)
            self._receive_until(lambda: all(w.gone.is_set() for w in victims) or None,
                                time.monotonic() + STOP_TIMEOUT)
        self.sweep(compute.prefix)

    def _fail_pending(self, which, why):
        """Takes the queued batches ``which`` selects off the queue; they end failed with ``why``."""
        with self._lock:
            failed = [b for b in self._pending if which(b)]
            self._pending = collections.deque(b for b in self._pending if not which(b))
        for b in failed:
            self._end(b, error=RuntimeError("batch of %s not run: %s" % (", ".join(map(repr, b.keys)), why)))

    def sweep(self, prefix):
        """Deletes every object whose id starts with ``prefix``."""
        try:
            infos = self.client.list()
        except Exception:
            return
        for info in infos:
            if bytes(info.id)[:len(prefix)] == prefix:
                self._delete(info.id)

    def close(self):
        with self._lock:
            if self._closing and not any(w.alive for w in self.workers):
                workers = []
            else:
                self._closing = True
                workers = list(self.workers)
        self._fail_pending(lambda b: True, "the depot.dask Scheduler was closed")
        stop = _transport.encode(Stop())
        for w in workers:
            try:
                w.conn.send_bytes(stop)
            except OSError:
                pass
        for w in workers:
            if w.exitcode(STOP_TIMEOUT) is None:
                w.kill()
                w.exitcode(STOP_TIMEOUT)
        with self._lock:
            self._quiet.notify()
        self._wake()
        self._discards.put(None)
        self._discarder.join(STOP_TIMEOUT)
        if self._collector.is_alive() and threading.current_thread() is not self._collector:
            self._collector.join(STOP_TIMEOUT)
        for w in workers:
            w.close_handles()
        for fd in (self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass
        self.sweep(self.token)
