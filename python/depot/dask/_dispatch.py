"""The queue of a pool's submitted batches and their sending: each goes to the worker placement chooses
(``_placement``) once that worker has room, with its continuations (``_continuations``); with nothing left to
send, an idle worker takes back a batch waiting behind another worker's running one."""

import collections
import threading

from . import _continuations, _placement, _transport
from ._functions import dumps_task
from ._transport import Publish, RunBatch, Unqueue

__all__ = ["Dispatcher"]


class Dispatcher:
    """The batches of a pool not yet sent (``pending``, in Dask's order) and what sends them.

    ``lock`` is the pool's lock, which guards ``pending`` and the workers' batches in flight; ``workers`` the
    pool's ``Workers``; ``held`` its ``HeldResults``; ``depth`` the batches each worker keeps in flight."""

    def __init__(self, lock, workers, held, depth):
        self._lock, self._workers, self._held, self.depth = lock, workers, held, depth
        #: batches submitted and not yet sent, in Dask's order (under the lock)
        self.pending = collections.deque()
        #: batches given back by the worker they waited on for an idle one, in all (figures)
        self.taken_back_count = 0
        #: held while choosing and sending, so that a worker gets its batches in the order placement chose them
        self._dispatching = threading.Lock()

    def requeue_first(self, batch):
        """``batch``, given back by its worker, goes first in the queue (under the lock)."""
        batch.taking_back = False
        batch.worker = None
        self.pending.appendleft(batch)
        self.taken_back_count += 1

    def take(self, which):
        """Takes the queued batches ``which`` selects off the queue and returns them (under the lock)."""
        taken = [b for b in self.pending if which(b)]
        self.pending = collections.deque(b for b in self.pending if not which(b))
        return taken

    def dispatch(self):
        """Sends queued batches while placement (``_placement.choose``) gives one to a worker with room, each with
        its continuations: after a submit, when a batch ends and when a worker is replaced. With nothing left to
        send, an idle worker takes back a batch waiting behind another worker's running one
        (``_take_back_for_idle``)."""
        with self._dispatching:
            self._dispatch_locked()

    def _dispatch_locked(self):
        while True:
            with self._lock:
                choice = self._choose()
                if choice is None:
                    take_back = self._take_back_for_idle()
                    break
                w, batch = choice
                compute = batch.compute
                w.inflight[batch.id] = batch
                batch.worker = w
                _placement.claim(compute.dependents, compute.homes, batch.keys[0], w.pid)
                chain = _continuations.chain(compute, batch, w.pid)
                batch.continued = tuple(d for d, _, _ in chain)
                for key in batch.keys:
                    compute.sent[key] = (w.pid, batch.oids[key])
                for key, _, raw in chain:
                    compute.sent[key] = (w.pid, raw)
                    _placement.claim(compute.dependents, compute.homes, key, w.pid)
                publish = self._held.to_publish(compute, w, batch.held)
            then, then_used = dumps_task(chain, compute.functions) if chain else (None, {})
            for holder, raws in publish.items():
                holder.send(Publish(raws))
            with w.send_lock:  # the worker's function table changes in the order of the messages
                definitions, forget = w.sent.delta({**batch.used, **then_used}, compute.functions)
                drops, w.pending_drops = w.pending_drops, []
                w.send_encoded(_transport.encode(RunBatch(batch.id, definitions, forget, batch.body, drops, then)))
        if take_back is not None:
            take_back.worker.send(Unqueue(take_back.id))

    def _choose(self):
        """``(worker, batch)`` to send next, taken off the queue, or None (under the lock)."""
        if not self.pending:
            return None
        alive = self._workers.alive()
        choice = _placement.choose({w.pid: len(w.inflight) for w in alive}, self.depth,
                                   (self._preference(b) for b in self.pending))
        if choice is None:
            return None
        pid, i = choice
        batch = self.pending[i]
        del self.pending[i]
        return next(w for w in alive if w.pid == pid), batch

    def _preference(self, batch):
        """``_placement.preference`` of ``batch``: its held inputs, its family, its share's worker if alive."""
        compute, key = batch.compute, batch.keys[0]
        share = compute.roots.get(key)
        workers = self._workers
        share_pid = (workers[share].pid if share is not None and share < len(workers) and workers[share].alive
                     else None)
        return _placement.preference(batch.held, compute.published, compute.dependents, compute.homes, key,
                                     share_pid)

    def _take_back_for_idle(self):
        """The batch to ask back (``Unqueue``) for an idle worker (``_placement.take_back_from``: at the end of a
        graph, the last leaf would otherwise wait for its worker's running one while another worker idles), or
        None (under the lock)."""
        if self.pending:
            return None
        pid = _placement.take_back_from({w.pid: len(w.inflight) for w in self._workers.alive()})
        if pid is None:
            return None
        batch = list(self._workers.by_pid(pid).inflight.values())[-1]  # the last sent: the one that waits
        if not _placement.may_take_back(batch.taking_back, batch.compute.unsubmitted):
            return None
        batch.taking_back = True
        return batch
