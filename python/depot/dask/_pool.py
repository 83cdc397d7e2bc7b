"""The scheduler's pool of worker processes, an executor for ``get_async``: it queues the batches submitted, has
them sent where placement chooses (``_dispatch``), and completes each batch's ``concurrent.futures.Future`` with
its worker's answer (``_transport``). One thread per worker receives that worker's answers and notices its death; a
worker that dies is replaced, and its batches fail naming their tasks.

Its parts: ``_processes`` (the worker processes, their pipes and pidfds), ``_dispatch`` (the queue of batches and
their sending), ``_compute`` (a compute and its batches), ``_held`` (results held in the workers' memory),
``_cleanup`` (releases and deletes off the scheduling loop).
"""

import itertools
import os
import select
import signal
import threading
import time

from . import _continuations, _transport, _worker
from ._cleanup import Discarder
from ._compute import PREFIX_LENGTH, TOKEN_LENGTH, Batch, Compute, fetch_held, held_by, held_inputs
from ._functions import dumps_task
from ._dispatch import Dispatcher
from ._held import HeldResults
from ._processes import STOP_TIMEOUT, WorkerDiedError, Workers, WorkerStartError, WorkerTaskError
from ._refs import Stored
from ._transport import Drop, DropPrefix, Failed, Ready, Stop, Unqueued, Unreadable

__all__ = ["Pool", "WorkerDiedError", "WorkerTaskError", "WorkerStartError", "fetch_held", "PREFIX_LENGTH"]


class Pool:
    """``size`` worker processes of the store at ``directory``, each keeping up to ``depth`` batches in flight."""

    def __init__(self, size, directory, inline_bytes, client, depth=2):
        if size < 1:
            raise ValueError("a pool needs at least one worker, got %d" % size)
        self.size, self.depth = size, depth
        self.directory, self.inline_bytes, self.client = directory, inline_bytes, client
        self.token = os.urandom(TOKEN_LENGTH)
        #: tasks whose result came as a continuation, in all (tests, figures)
        self.continuations_used_count = 0
        self._lock = threading.Lock()
        self._computes, self._batches = itertools.count(1), itertools.count(1)
        self._closing = False
        self._discarder = Discarder(client)
        #: the receiving thread of each worker started, the replacements' too (joined at close)
        self._receivers = []
        self.workers = Workers(size, directory, inline_bytes)
        self._held = HeldResults(self._lock, self.workers, client, self._discarder)
        self._dispatcher = Dispatcher(self._lock, self.workers, self._held, depth)
        with self._lock:
            for w in self.workers:
                self._start_receiving(w)
        try:
            self.workers.await_ready()
        except BaseException:
            self.close()
            raise

    @property
    def published_count(self):
        """Held results whose holders were asked to store them in Depot, in all (tests, figures)."""
        return self._held.published_count

    def pids(self):
        with self._lock:
            return [w.pid for w in self.workers]

    # ---- computes and their batches ---------------------------------------------------------------------

    def new_compute(self):
        """A compute on this pool: ids for its objects, what placement knows of its graph."""
        return Compute(self.token, next(self._computes), self)

    def submit(self, compute, fn, args):
        """Queues a batch (``fn(args)``, as ``dask.local.get_async`` submits it) and sends what placement gives a
        worker with a free place (``Dispatcher.dispatch``); returns the batch's ``concurrent.futures.Future``, completed by
        its worker's receiving thread with ``[(key, result, failed)]``, or with the batch's failure."""
        keys = [a[0] for a in args]
        if len(keys) == 1 and keys[0] in compute.precomputed:
            with self._lock:
                result, failed = _continuations.take(compute, keys[0])
            self.continuations_used_count += 1
            batch = Batch(next(self._batches), compute, keys, {}, [], b"", {})
            self._end(batch, [(keys[0], result, failed)])
            return batch.future
        oids = {key: bytes(compute.new_oid()) for key in keys}
        held = held_inputs(fn, args)
        # pickled here, so that a task that cannot be pickled fails its compute at once, in the caller's thread
        body, used = dumps_task((*_worker.compact(fn, args), oids), compute.functions)
        batch = Batch(next(self._batches), compute, keys, oids, held, body, used)
        with self._lock:
            if self._closing:
                raise RuntimeError("this depot.dask Scheduler is closed")
            if not self.workers.any_alive():
                raise WorkerDiedError("no depot.dask worker is alive")
            self._dispatcher.pending.append(batch)
        self._dispatcher.dispatch()
        return batch.future

    # ---- held results and cleanup -----------------------------------------------------------------------

    def fetch(self, compute, held):
        """A held result read in this process (``HeldResults.fetch``)."""
        return self._held.fetch(compute, held)

    def release_held(self, compute, held):
        """No task needs ``held`` any more (``HeldResults.release``)."""
        self._held.release(compute, held)

    def end_compute(self, compute):
        """Every worker forgets what it holds of ``compute``."""
        self._held.end_compute(compute)

    def discard(self, view, oid, owned):
        """Releases ``view`` (a pin) and then, if ``owned``, deletes ``oid``, in the discarder thread."""
        self._discarder.discard(view, oid, owned)

    def drain(self):
        """Waits until every discard asked so far is done."""
        self._discarder.drain()

    def sweep(self, prefix):
        """Deletes every object whose id starts with ``prefix``."""
        self._discarder.sweep(prefix)

    # ---- receiving: one thread per worker ------------------------------------------------------------------

    def _start_receiving(self, w):
        """Starts ``w``'s receiving thread (under the lock)."""
        thread = threading.Thread(target=self._receive, args=(w,), name="depot-dask-receiver-%d" % w.pid,
                                  daemon=True)
        self._receivers.append(thread)
        thread.start()

    def _receive(self, w):
        """``w``'s receiving thread: takes in its messages until its pipe ends or its process does."""
        poll = select.poll()
        poll.register(w.conn.fileno(), select.POLLIN)
        if w.sentinel is not None:
            poll.register(w.sentinel, select.POLLIN)
        conn_fd = w.conn.fileno()
        while True:
            # any event on the pipe counts (POLLHUP, POLLERR: the read says what happened); the pidfd only when
            # nothing is left to read (a process that forked keeps the pipe open after it died)
            if not any(fd == conn_fd for fd, _ in poll.poll()):
                break
            try:
                data = w.conn.recv_bytes()
            except (EOFError, OSError):
                break
            self._received(w, _transport.decode(data))
        self._died(w)

    def _end(self, batch, body=None, error=None):
        """Completes ``batch``'s future with its results, or its failure (once)."""
        with self._lock:
            if batch.ended:
                return
            batch.ended = True
        if error is not None:
            batch.future.set_exception(error)
        else:
            batch.future.set_result(body)

    def _received(self, w, message):
        kind = type(message)
        if kind is Ready or kind is Failed:
            w.start_error = message.text if kind is Failed else _transport.version_mismatch(message.version)
            w.ready.set()
        elif kind is Unqueued:
            self._given_back(w, message.batch_id)
        elif kind is Unreadable:
            with self._lock:
                batch = w.inflight.pop(message.batch_id, None)
            if batch is not None:
                self._end(batch, error=WorkerTaskError(
                    "depot.dask worker %d could not read the batch of %s:\n%s" % (w.pid, batch.names(), message.text)))
                self._dispatcher.dispatch()
        else:
            self._results(w, message.batch_id, message.results, message.seconds)

    def _given_back(self, w, batch_id):
        """``w`` gave back batch ``batch_id`` (``Unqueue``): it goes first in the queue, or fails if its compute was
        abandoned."""
        with self._lock:
            batch = w.inflight.pop(batch_id, None)
            requeue = batch is not None and not batch.compute.abandoned and not self._closing
            if batch is not None:
                _continuations.forget(batch)
            if requeue:
                self._dispatcher.requeue_first(batch)
        if batch is not None and not requeue:
            self._end(batch, error=RuntimeError("batch of %s not run: its compute was abandoned"
                                                % ", ".join(map(repr, batch.keys))))
        self._dispatcher.dispatch()

    def _results(self, w, batch_id, body, seconds):
        with self._lock:
            batch = w.inflight.pop(batch_id, None)
        if batch is None:
            # results of a batch this worker no longer has in flight (it was given back and runs elsewhere): no
            # one will ask for what it holds of them, so it forgets them now, not at the end of the compute (a
            # held result can pin its inputs' memory, and a run that ends after the compute did is never told)
            raws = held_by(body, w.pid)
            if raws:
                w.send(Drop(raws))
            return
        self._dispatcher.dispatch()
        compute = batch.compute
        compute.task_seconds.update(seconds)
        with self._lock:
            body = _continuations.keep(compute, batch, body)
        if compute.abandoned:
            for _, res_info, failed in body:
                if not failed and isinstance(res_info[0], Stored) and compute.owns(res_info[0].oid):
                    self._discarder.delete(res_info[0].oid)
            w.send(DropPrefix(compute.prefix))
            self.sweep(compute.prefix)  # and what its tasks stored themselves (DataFrame shuffle slices)
        self._end(batch, body)

    def _died(self, w):
        code = w.reap()
        with self._lock:
            w.alive = False
            batches = list(w.inflight.values())
            w.inflight.clear()
            # a worker that died before it ever started is not replaced (it would die again, forever)
            if not self._closing and w.ready.is_set() and w.start_error is None:
                self._start_receiving(self.workers.replace(w))
        w.close_handles()
        # whatever the dead worker had stored for its unfinished tasks is not wanted by anyone
        for batch in batches:
            for oid in batch.oids.values():
                self._discarder.delete(oid)
        how = w.how_it_ended(code)
        for batch in batches:
            self._end(batch, error=WorkerDiedError("depot.dask worker %d %s while running %s; a new worker "
                                                   "replaces it" % (w.pid, how, batch.names())))
        if not w.ready.is_set() and w.start_error is None:
            w.start_error = "it %s before connecting to the store" % how
        w.gone.set()
        w.ready.set()
        self._dispatcher.dispatch()  # to the new worker

    # ---- cancelling and closing -------------------------------------------------------------------------

    def abandon(self, compute, cancel):
        """After a failure or Ctrl-C: results still to come are deleted on arrival; with ``cancel`` the workers
        running this compute's tasks are killed (and replaced) so that nothing keeps running. Then every object
        of the compute is deleted."""
        compute.abandoned = True
        self._fail_pending(lambda b: b.compute is compute, "its compute was abandoned")
        if cancel:
            with self._lock:
                victims = [w for w in self.workers.alive() if any(b.compute is compute for b in w.inflight.values())]
            for w in victims:
                try:
                    os.kill(w.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + STOP_TIMEOUT
            for w in victims:  # their receiving threads see them go
                w.gone.wait(max(0.0, deadline - time.monotonic()))
        self.sweep(compute.prefix)

    def _fail_pending(self, which, why):
        """Takes the queued batches ``which`` selects off the queue; they end failed with ``why``."""
        with self._lock:
            failed = self._dispatcher.take(which)
        for b in failed:
            self._end(b, error=RuntimeError("batch of %s not run: %s" % (", ".join(map(repr, b.keys)), why)))

    def close(self):
        with self._lock:
            if self._closing and not self.workers.any_alive():
                workers = []
            else:
                self._closing = True
                workers = list(self.workers)
        self._fail_pending(lambda b: True, "the depot.dask Scheduler was closed")
        stop = _transport.encode(Stop())
        for w in workers:
            w.send_encoded(stop)
        for w in workers:
            if w.exitcode(STOP_TIMEOUT) is None:
                w.kill()
                w.exitcode(STOP_TIMEOUT)
        with self._lock:
            receivers = list(self._receivers)
        for thread in receivers:  # each ends with its worker
            if thread is not threading.current_thread():
                thread.join(STOP_TIMEOUT)
        self._discarder.close(STOP_TIMEOUT)
        self.sweep(self.token)
