"""``depot.dask.Cache``: like ``dask.cache.Cache``, but the cache is in Depot, shared by every process."""

import warnings
from timeit import default_timer

from dask.callbacks import Callback

from depot.cache import CLAIM_TIMEOUT_DEFAULT, HALFLIFE_DEFAULT, SharedCache
from depot.errors import DepotError

from ._objects import get_object
from ._refs import Held, Inline, Stored
from .scheduler import task_seconds

__all__ = ["Cache"]


class Cache(Callback):
    """A ``dask.callbacks.Callback`` that keeps task results in Depot under their Dask keys, for every process on
    the node and for later runs; works with the synchronous, threaded, process and depot.dask schedulers.

    On start, every key of the graph already in the cache is replaced by its value (read zero-copy). Every other
    key is claimed: when another process is computing it right now, this one waits for its result instead of
    computing it again. After each task, its result is kept if the cachey-style score (compute time, including
    that of the task's inputs, per byte, decayed since last use) earns it a place within ``limit_bytes``. The
    compute time is measured around ``pretask``/``posttask`` in the caller, as ``dask.cache.Cache`` does, except
    under the depot.dask scheduler, whose workers measure each task's own run time (the caller's clock would add
    the time a task waited in a worker's queue, and give ~0 to a task a worker ran as a continuation).

    Parameters
    ----------
    limit_bytes : int
        The bytes of results to keep, across every process using the same namespace.
    dir : str, optional
        The store's directory (default: ``depot.default_directory()``).
    namespace : str
        Caches of different namespaces never share results.
    claim : bool
        Claim missing keys so that concurrent computations of the same key run once (a few small requests per
        missing key; turn off for graphs of very many cheap tasks).
    claim_timeout : float
        Seconds to wait for another process computing a key before looking at it: when it is stopped or gone,
        this one computes the key itself.

    Examples
    --------
    >>> with depot.dask.Cache(2 << 30):          # doctest: +SKIP
    ...     x.compute()
    """

    def __init__(self, limit_bytes, dir=None, namespace="dask", claim=True, halflife=HALFLIFE_DEFAULT,
                 claim_timeout=CLAIM_TIMEOUT_DEFAULT):
        super().__init__()
        self.cache = SharedCache(limit_bytes, dir=dir, namespace=namespace, halflife=halflife,
                                 claim_timeout=claim_timeout)
        self.claim = claim
        self.starttimes = {}
        self.durations = {}
        self._claims = {}

    def _start(self, dsk):
        self.starttimes = {}
        self.durations = {}
        for key in list(dsk):
            if self.claim:
                found, got = self.cache.get_or_claim(key)
                if not found:
                    self._claims[key] = got
                    continue
            else:
                found, got = self.cache.lookup(key)
                if not found:
                    continue
            dsk[key] = got

    def _pretask(self, key, dsk, state):
        self.starttimes[key] = default_timer()

    def _posttask(self, key, value, dsk, state, id):
        duration = default_timer() - self.starttimes.pop(key, default_timer())
        measured = task_seconds(key)  # a depot.dask worker's own clock, when the task ran in one
        if measured is not None:
            duration = measured
        deps = state["dependencies"][key]
        if deps:
            duration += max(self.durations.get(k, 0) for k in deps)
        self.durations[key] = duration
        claim = self._claims.pop(key, None)
        try:
            self.cache.put(key, self._plain(value), duration, claim=claim)
        except DepotError as e:  # a cache never fails the compute: the result is simply not kept
            warnings.warn("depot.dask.Cache did not keep %r: %s" % (key, e), RuntimeWarning, stacklevel=2)

    def _finish(self, dsk, state, errored):
        claims, self._claims = self._claims, {}
        for claim in claims.values():
            self.cache.release(claim)
        self.starttimes = {}

    def _plain(self, value):
        """A result as the depot.dask scheduler hands it to callbacks, as the value itself."""
        if isinstance(value, Held):
            from ._pool import fetch_held
            return fetch_held(value)
        if isinstance(value, Stored):
            return get_object(self.cache.client, value.oid, timeout=0)
        if isinstance(value, Inline):
            return value.load()
        return value

    @property
    def hits(self):
        return self.cache.hits

    @property
    def misses(self):
        return self.cache.misses

    def clear(self):
        """Deletes every result of this cache from the store."""
        self.cache.clear()
