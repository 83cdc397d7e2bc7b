"""The scheduler's worker processes: spawned, each with its own Depot client, fed batches over a pipe; one
collector thread receives their results and notices their deaths.

Every object a worker stores has an id the pool chose before sending the batch (the scheduler's token, the
compute's number, a counter), so whatever a dead or cancelled worker left behind can be found and deleted.
"""

import concurrent.futures
import itertools
import json
import multiprocessing
import multiprocessing.connection
import os
import pickle
import queue
import signal
import socket
import subprocess
import sys
import threading

from depot.ids import ID_LENGTH, ObjectId

from . import _worker
from ._functions import ComputeFunctions, SentFunctions, dumps_task
from ._refs import Stored

TOKEN_LENGTH = 8
COMPUTE_LENGTH = 4
PREFIX_LENGTH = TOKEN_LENGTH + COMPUTE_LENGTH
COUNTER_LENGTH = ID_LENGTH - PREFIX_LENGTH

START_TIMEOUT = 120.0
STOP_TIMEOUT = 10.0


class WorkerDiedError(RuntimeError):
    """A worker process died while it ran a task (killed, out of memory, a crash in native code)."""


class WorkerTaskError(RuntimeError):
    """A worker could not read the tasks it was sent (a function it cannot import, say)."""


class WorkerStartError(RuntimeError):
    """A worker process could not start or could not connect to the store."""


class Compute:
    """One call of the scheduler: its id prefix, its objects' pins, and whether it was abandoned."""

    def __init__(self, pool, number):
        self.pool = pool
        self.prefix = pool.token + number.to_bytes(COMPUTE_LENGTH, "little")
        self._counter = itertools.count(1)
        self.abandoned = False
        self.functions = ComputeFunctions()

    def new_oid(self):
        return ObjectId(self.prefix + next(self._counter).to_bytes(COUNTER_LENGTH, "little"))

    def owns(self, oid):
        return bytes(oid)[:PREFIX_LENGTH] == self.prefix


class _Batch:
    __slots__ = ("id", "compute", "keys", "oids", "future", "worker")

    def __init__(self, batch_id, compute, keys, oids, worker):
        self.id = batch_id
        self.compute = compute
        self.keys = keys
        self.oids = oids
        self.future = concurrent.futures.Future()
        self.worker = worker


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
                 str(theirs.fileno()), directory, str(inline_bytes)],
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


class Pool:
    def __init__(self, size, directory, inline_bytes, client, on_result=None):
        if size < 1:
            raise ValueError("a pool needs at least one worker, got %d" % size)
        self.size = size
        self.directory = directory
        self.inline_bytes = inline_bytes
        self.client = client
        self.token = os.urandom(TOKEN_LENGTH)
        self._lock = threading.Lock()
        self._computes = itertools.count(1)
        self._batches = itertools.count(1)
        self._indexes = itertools.count(0)
        self._closing = False
        self._wake_r, self._wake_w = os.pipe()
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
        return Compute(self, next(self._computes))

    def submit(self, compute, fn, args):
        """Sends a batch (``fn(args)``, as ``dask.local.get_async`` submits it) to the least busy worker."""
        keys = [a[0] for a in args]
        oids = {key: bytes(compute.new_oid()) for key in keys}
        with self._lock:
            if self._closing:
                raise RuntimeError("this depot.dask Scheduler is closed")
            alive = [w for w in self.workers if w.alive]
            if not alive:
                raise WorkerDiedError("no depot.dask worker is alive")
            w = min(alive, key=lambda x: len(x.inflight))
            batch = _Batch(next(self._batches), compute, keys, oids, w)
            w.inflight[batch.id] = batch
        try:
            body, used = dumps_task((*_worker.compact(fn, args), oids), compute.functions)
        except BaseException:
            with self._lock:
                w.inflight.pop(batch.id, None)
            raise
        with w.send_lock:
            definitions, forget = w.sent.delta(used, compute.functions)
            # the batch id also in the last 8 bytes, for a worker that cannot unpickle the rest
            message = pickle.dumps((batch.id, definitions, forget, body), protocol=5) + batch.id.to_bytes(8, "little")
            try:
                w.conn.send_bytes(message)
            except OSError:
                pass  # the worker died: the collector fails the batch
        return batch.future

    # ---- the collector thread -------------------------------------------------------------------------

    def _collect(self):
        while True:
            with self._lock:
                if self._closing and not any(w.alive for w in self.workers):
                    return
                workers = [w for w in self.workers if w.alive]
            waitables = [self._wake_r]
            for w in workers:
                waitables.append(w.conn)
                if w.sentinel is not None:
                    waitables.append(w.sentinel)
            for ready in multiprocessing.connection.wait(waitables):
                if ready == self._wake_r:
                    os.read(self._wake_r, 4096)
                    continue
                for w in workers:
                    if not w.alive:
                        continue
                    if ready is w.conn:
                        try:
                            message = w.conn.recv_bytes()
                        except (EOFError, OSError):
                            self._died(w)
                            continue
                        self._received(w, message)
                    elif ready == w.sentinel:
                        self._died(w)

    def _received(self, w, message):
        tag, body = pickle.loads(message)
        if tag == "ready":
            w.ready.set()
            return
        if tag == "failed":
            w.start_error = body
            w.ready.set()
            return
        if tag == "unreadable":
            batch_id, text = body
            with self._lock:
                batch = w.inflight.pop(batch_id, None)
            if batch is not None:
                batch.future.set_exception(WorkerTaskError(
                    "depot.dask worker %d could not read the batch of task%s %s:\n%s"
                    % (w.pid, "s" if len(batch.keys) > 1 else "", ", ".join(repr(k) for k in batch.keys), text)))
            return
        with self._lock:
            batch = w.inflight.pop(tag, None)
        if batch is None:
            return
        compute = batch.compute
        if compute.abandoned:
            for _, res_info, failed in body:
                if not failed and isinstance(res_info[0], Stored) and compute.owns(res_info[0].oid):
                    self._delete(res_info[0].oid)
            self.sweep(compute.prefix)  # and what its tasks stored themselves (DataFrame shuffle slices)
        batch.future.set_result(body)

    def _died(self, w):
        code = w.exitcode(STOP_TIMEOUT)
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
            if not batch.future.done():
                batch.future.set_exception(WorkerDiedError(
                    "depot.dask worker %d %s while running task%s %s; a new worker replaces it"
                    % (w.pid, how, "s" if len(batch.keys) > 1 else "", ", ".join(repr(k) for k in batch.keys))))
        if not w.ready.is_set() and w.start_error is None:
            w.start_error = "it %s before connecting to the store" % how
        w.gone.set()
        w.ready.set()

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
            for w in victims:
                w.gone.wait(STOP_TIMEOUT)
        self.sweep(compute.prefix)

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
        stop = pickle.dumps(_worker.STOP)
        for w in workers:
            try:
                w.conn.send_bytes(stop)
            except OSError:
                pass
        for w in workers:
            if w.exitcode(STOP_TIMEOUT) is None:
                w.kill()
                w.exitcode(STOP_TIMEOUT)
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
