"""Results that workers hold in their own memory (``Held``): which holder is asked to store which in Depot, once
per compute (``publish`` requests), and which it forgets when no task needs them any more."""

from . import _worker
from ._transport import Drop, DropPrefix, Publish

__all__ = ["HeldResults"]


class HeldResults:
    """The pool's view of its workers' held results. ``lock`` is the pool's; ``workers`` its ``Workers``;
    ``discarder`` deletes a published copy once it is forgotten."""

    def __init__(self, lock, workers, client, discarder):
        self._lock = lock
        self._workers = workers
        self._client = client
        self._discarder = discarder
        #: held results whose holders were asked to store them in Depot, in all (tests, figures)
        self.published_count = 0

    def to_publish(self, compute, w, held):
        """``{holder worker: [raw ids]}``: the inputs in ``held`` that ``w`` does not hold and that their holders
        were not asked for yet (marked asked; under the lock)."""
        out = {}
        for h in held:
            raw = bytes(h.oid)
            if h.holder == w.pid or raw in compute.published:
                continue
            holder = self._workers.by_pid(h.holder)
            if holder is None:
                continue  # died: the task waiting for it says so
            compute.published.add(raw)
            self.published_count += 1
            out.setdefault(holder, []).append(raw)
        return out

    def fetch(self, compute, held):
        """A held result read in this process: its holder is asked to store it in Depot (once), then it is read
        zero-copy from there."""
        with self._lock:
            holder = self._workers.by_pid(held.holder)
            raw = bytes(held.oid)
            ask = holder is not None and raw not in compute.published
            if ask:
                compute.published.add(raw)
                self.published_count += 1
        if ask:
            holder.send(Publish([raw]))
        return _worker.await_published(self._client, held)

    def release(self, compute, held):
        """No task needs ``held`` any more: its holder forgets it (with its next message, or at the end of the
        compute), and its copy in Depot, if it was published, is deleted. A published one is forgotten at once:
        its holder's view pins the copy in the store, which is freed only when that pin goes."""
        raw = bytes(held.oid)
        with self._lock:
            w = self._workers.by_pid(held.holder)
            published = raw in compute.published
        if w is not None:
            if published:
                w.send(Drop([raw]))
            else:
                with w.send_lock:
                    w.pending_drops.append(raw)
        if published:
            self._discarder.discard(None, held.oid, True)

    def end_compute(self, compute):
        """Every worker forgets what it holds of ``compute``."""
        with self._lock:
            workers = self._workers.alive()
        for w in workers:
            with w.send_lock:
                w.pending_drops = []
            w.send(DropPrefix(compute.prefix))
