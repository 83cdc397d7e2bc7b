"""Continuations: a batch of one task carries the dependents its worker can run right after it, without another
message from the scheduler (``chain``). The worker runs them while it still holds their inputs
(``_worker._continue``) and sends their results with the batch's (``keep``); when ``get_async`` submits such a key,
its result is there already (``take``).

A tree's combine whose other input is already on the same worker is run there at once: the worker does not wait
for the scheduler's round trip between a leaf and each combine above it, and the scheduler sends no message for
it. Only for graphs sent one task per batch.
"""

from ._refs import Held

__all__ = ["chain", "keep", "take", "forget"]

#: a batch of one task carries at most this many continuations
CONTINUATION_DEPTH = 8


def chain(compute, batch, pid):
    """``[(key, (task, inputs), raw id)]``: the dependents worker ``pid`` can run right after ``batch`` (under the
    pool's lock; they are recorded in ``compute.continued``). Each is the only dependent of the one before (the
    first, of the batch's task), and each of its inputs is that one, or a result ``pid`` holds (computed before, or
    by a continuation that ran or is queued there), or one any worker can read."""
    if (compute.dsk is None or compute.dependencies is None or compute.results is None
            or compute.chunksize != 1 or len(batch.keys) != 1):
        return []
    done = compute.results  # get_async's cache (read only)
    key = batch.keys[0]
    here = {key: Held(batch.oids[key], 0, pid)}
    out = []
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
                ref = _readable_on(compute, k, pid, done)
            if ref is None:
                break
            inputs[k] = ref
        else:
            raw = bytes(compute.new_oid())
            out.append((d, (compute.dsk[d], inputs), raw))
            compute.continued[d] = raw
            here[d] = Held(raw, 0, pid)
            key = d
            continue
        break
    return out


def _readable_on(compute, key, pid, done):
    """What a continuation on worker ``pid`` gets for its input ``key``: its result if ``pid`` holds it or any
    worker can read it, a reference to it if a batch or a continuation sent to ``pid`` makes it, else None."""
    if key in compute.precomputed:
        (value, _), failed = compute.precomputed[key]  # as a worker sent it: ((result, worker pid), failed)
        if failed:
            return None
    elif key in done:
        value = done[key]
    else:
        # queued or running on ``pid``: it runs before (a worker runs its batches in the order sent)
        sent_to, raw = compute.sent.get(key, (None, None))
        return Held(raw, 0, pid) if sent_to == pid else None
    if isinstance(value, Held):
        return value if value.holder == pid else None
    return value


def keep(compute, batch, results):
    """The batch's own results out of a worker's ``results``; its continuations' are kept for ``take`` (under the
    pool's lock)."""
    if len(results) <= len(batch.keys):
        return results
    for key, result, failed, _ in results[len(batch.keys):]:
        compute.precomputed[key] = (result, failed)
    return results[:len(batch.keys)]


def take(compute, key):
    """``(result, failed)`` of ``key``, run as a continuation, or None (under the pool's lock)."""
    ran = compute.precomputed.pop(key, None)
    if ran is not None:
        compute.continued.pop(key, None)
    return ran


def forget(batch):
    """``batch`` was given back: its continuations were not run (under the pool's lock)."""
    for d in batch.continued:
        batch.compute.continued.pop(d, None)
    batch.continued = ()
