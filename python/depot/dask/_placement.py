"""Placement: which worker runs which queued batch, as functions over plain data (pids, counts, keys, dicts), so
that the policy reads and tests apart from the pool that applies it.

A batch *prefers* a worker (``preference``): the one holding most bytes of its inputs that are not in Depot yet
(one that is can be read anywhere); else its family's worker (``home_of``: the first worker to run an input of
one of its dependents, or of theirs, ``claim``); else, for a task ready at the start, the worker of its share
(``split_roots``). The worker with fewest batches in flight chooses first (``choose``).

Dask orders a tree's leaves depth first (``a0, a1, combine(a0, a1), a2, ...``): placing each leaf on the worker
expected free first would alternate siblings between the workers, so that half of all combines moved an input
(``dask.distributed`` co-assigns root tasks for the same reason). Families and shares keep a subtree on one
worker.
"""

import itertools

__all__ = ["split_roots", "home_of", "claim", "preference", "choose", "take_back_from", "may_take_back"]

#: placement of a task without held inputs looks at no more than this many of its dependents (a task that
#: feeds thousands would otherwise cost thousands of lookups), and at theirs: a worker that starts a family claims
#: its parent and grandparent, so that another worker starts the next grandparent's family, not the sibling
#: family (which would move an input at each combine of the second level)
HOME_DEPENDENTS_LOOKED_AT = 4
HOME_LEVELS = 2
#: a worker with room looks for a batch that prefers it among no more than this many queued ones
PENDING_LOOKED_AT = 32


def split_roots(ready, workers, chunksize):
    """``{key: share index}``: each of ``workers`` workers gets a contiguous share of the tasks ready at the start
    (``get_async``'s ``state["ready"]``: a list it pops from the end, the most urgent last), and ``ready`` is
    reordered in place so that ``get_async`` submits the shares' first tasks side by side, ``chunksize`` at a
    time.

    Dask orders a tree's leaves depth first, so a contiguous share of them is a subtree: each worker computes
    its own subtree, with its combines, and only the combines above the shares move a result between workers.
    Tasks that become ready later are appended by ``get_async`` and come first (depth first, so memory stays
    bounded)."""
    if not isinstance(ready, list) or workers < 2 or len(ready) < 2:
        return {}
    urgent_first = ready[::-1]
    n = len(urgent_first)
    shares = [urgent_first[i * n // workers:(i + 1) * n // workers] for i in range(workers)]
    roots = {key: i for i, share in enumerate(shares) for key in share}
    side_by_side = []
    for start in range(0, max(len(share) for share in shares), chunksize):
        for share in shares:
            side_by_side.extend(share[start:start + chunksize])
    ready[:] = side_by_side[::-1]
    return roots


def _dependents_of(dependents, keys):
    if dependents is None:
        return []
    out = []
    for key in keys:
        out.extend(itertools.islice(dependents.get(key, ()), HOME_DEPENDENTS_LOOKED_AT))
    return out


def home_of(dependents, homes, key):
    """The pid in ``homes`` (key -> pid) of the nearest of ``key``'s dependents, or of theirs (``HOME_LEVELS``),
    or None: the worker of its family. ``dependents``: key -> keys that need it, or None."""
    level = _dependents_of(dependents, [key])
    for _ in range(HOME_LEVELS):
        for d in level:
            pid = homes.get(d)
            if pid is not None:
                return pid
        level = _dependents_of(dependents, level)
    return None


def claim(dependents, homes, key, pid):
    """``key`` runs on worker ``pid``: its dependents, and theirs (``HOME_LEVELS``), that no worker claimed yet
    are claimed in ``homes`` by that one."""
    level = _dependents_of(dependents, [key])
    for _ in range(HOME_LEVELS):
        for d in level:
            homes.setdefault(d, pid)
        level = _dependents_of(dependents, level)


def preference(held, published, dependents, homes, key, share):
    """``(pid, by_share)``: the worker a batch whose first task is ``key`` would rather run on, or ``(None,
    False)``.

    ``held``: its inputs held by workers (``Held``: ``oid``, ``nbytes``, ``holder``); ``published``: the raw ids
    of held results stored in Depot already; ``share``: the live worker of ``key``'s share of the tasks ready at
    the start, or None. ``by_share`` is True when only the share decides: nothing of the batch is anywhere yet,
    so any worker may take it at no cost."""
    by_holder = {}
    for h in held:
        if bytes(h.oid) not in published:
            by_holder[h.holder] = by_holder.get(h.holder, 0) + h.nbytes
    if by_holder:
        return max(by_holder, key=by_holder.get), False
    family = home_of(dependents, homes, key)
    if family is not None:
        return family, False
    if share is not None:
        return share, True
    return None, False


def choose(inflight, depth, preferences):
    """``(pid, i)``: the worker that takes the ``i``-th queued batch next, or None when every queued batch waits.

    ``inflight``: batches in flight per live worker, ``{pid: count}`` in the pool's order (the first wins ties);
    ``depth``: the batches a worker may have in flight; ``preferences``: the queued batches' ``preference``, in
    queue order (an iterable, read lazily and no further than ``PENDING_LOOKED_AT``).

    The worker with fewest in flight chooses: it takes the first batch that prefers it; else a batch goes to the
    worker it prefers if that one has room (and is idle too, when the chooser is); else the chooser takes the
    first that prefers no worker, or, when it is idle, the first (no worker idles while a batch waits), or
    rather the first that only its share prefers (its family follows it: nothing moves)."""
    free = {pid: n for pid, n in inflight.items() if n < depth}
    if not free:
        return None
    least = min(free, key=free.get)
    idle = free[least] == 0
    neutral = elsewhere = shared_only = None
    seen = 0
    for i, (preferred, by_share) in enumerate(itertools.islice(preferences, PENDING_LOOKED_AT)):
        seen += 1
        if preferred == least:
            return least, i
        if preferred is None:
            neutral = i if neutral is None else neutral
        else:
            if elsewhere is None and preferred in free and (free[preferred] == 0 or not idle):
                elsewhere = (preferred, i)
            if by_share and shared_only is None:
                shared_only = i
    if not seen:
        return None
    if elsewhere is not None:
        return elsewhere
    if neutral is not None:
        return least, neutral
    if idle:
        return least, 0 if shared_only is None else shared_only
    return None


def take_back_from(inflight):
    """The pid of the worker to ask for the batch waiting behind its running one, for an idle worker: the busiest,
    if it has two or more in flight and some worker has none; else None. ``inflight``: ``{pid: count}`` of the
    live workers. The caller asks only when nothing waits in the pool."""
    if not inflight or min(inflight.values()) > 0:
        return None
    busiest = max(inflight, key=inflight.get)
    return busiest if inflight[busiest] >= 2 else None


def may_take_back(asked, unsubmitted):
    """Whether the batch waiting on ``take_back_from``'s worker may be asked back: not when it was ``asked``
    already, nor while ``get_async`` has ``unsubmitted`` ready tasks (its ``state["ready"]``): it submits one
    as soon as it has taken in the result that idled a worker, and the idle worker takes that; taken back now, a
    batch of the other worker's share would move its results between the workers."""
    return not asked and not unsubmitted
