"""A cache of Python values shared by every process on the node, in Depot: ``SharedCache`` and the ``memoize``
decorator (and, for Dask, ``depot.dask.Cache``).

Each value is one Depot object under an id derived from the cache's namespace and the value's key, so any
process that asks for the same key finds it. What stays within ``limit_bytes`` is decided as cachey does:
the time the value took to compute relative to its size, decayed since it was last used (the store records
every object's last access). A key being computed is claimed with an unsealed marker object, and a small sealed
record next to it names the claimant (pid and start time). A second process that wants the key meanwhile waits
for the first's seal instead of computing it again. It takes over when the first gives up or dies (the daemon
aborts a dead client's marker), and also when, after ``claim_timeout`` seconds of waiting, the first is
stopped (SIGSTOP, a debugger) or gone: it then claims the key's next generation, so that of many waiters one
computes it while the others wait for that one. A claimant stopped and resumed later finds the value there;
its own is not kept.
"""

import functools
import hashlib
import os
import time
import warnings
from timeit import default_timer

from ._process import identity, state_of
from ._task_context import client_for
from .client import default_directory
from .errors import DepotError, ObjectExistsError, ObjectMissingError
from .ids import ObjectId
from .pickling import object_size

__all__ = ["Claim", "SharedCache", "memoize"]

VALUE_TAG = b"DKC1"
CLAIM_TAG = b"DKL1"
OWNER_TAG = b"DKO1"
NAMESPACE_LENGTH = 4
ENTRY_MAGIC = "depot.cache/1"
HALFLIFE_DEFAULT = 600.0
WAIT_SLICE = 0.05
#: seconds a caller waits for another process's claim before it looks whether that process still runs
CLAIM_TIMEOUT_DEFAULT = 30.0


class SharedCache:
    """Values under deterministic keys, in the store, for every process.

    Parameters
    ----------
    limit_bytes : int
        The bytes of values this cache keeps (across every process using the same namespace).
    dir : str, optional
        The store's directory (default: ``depot.default_directory()``); a daemon must serve it.
    namespace : str
        Caches with different namespaces never see each other's values.
    halflife : float
        Seconds after which an unused value's score halves.
    claim_timeout : float
        Seconds a caller waits for another process computing the same key before it looks at that process:
        when it is stopped or gone, the caller computes the value itself; while it runs, the caller waits on.
    keep : bool
        Values are KEEP objects: the store never evicts them (a daemon with a spill directory spills them to
        disk when it needs room, and a get restores them); only ``limit_bytes`` and ``clear`` delete them.
        Default: evictable, so a full store also drops the least recently used.
    """

    def __init__(self, limit_bytes, dir=None, namespace="default", halflife=HALFLIFE_DEFAULT,
                 claim_timeout=CLAIM_TIMEOUT_DEFAULT, keep=False):
        if limit_bytes < 0:
            raise ValueError("limit_bytes must be >= 0, got %r" % (limit_bytes,))
        if not claim_timeout >= 0:
            raise ValueError("claim_timeout must be >= 0 seconds, got %r" % (claim_timeout,))
        self.claim_timeout = float(claim_timeout)
        self.keep = bool(keep)
        self.limit_bytes = int(limit_bytes)
        self.directory = os.path.abspath(dir if dir is not None else default_directory())
        self.namespace = namespace
        self.halflife = float(halflife)
        self._ns = hashlib.sha256(namespace.encode("utf-8")).digest()[:NAMESPACE_LENGTH]
        self._added_since_check = 0
        self.hits = 0
        self.misses = 0

    @property
    def client(self):
        """The client of the store: the running task's when a Depot scheduler runs this process's task on it,
        else this process's shared client (``depot._task_context.client_for``)."""
        return client_for(self.directory)

    # ---- ids --------------------------------------------------------------------------------------------

    def _digest(self, key, generation=0):
        text = repr(key) if generation == 0 else "%r#%d" % (key, generation)
        return hashlib.sha256(text.encode("utf-8")).digest()[:20 - len(VALUE_TAG) - NAMESPACE_LENGTH]

    def value_id(self, key):
        return ObjectId(VALUE_TAG + self._ns + self._digest(key))

    def claim_id(self, key, generation=0):
        return ObjectId(CLAIM_TAG + self._ns + self._digest(key, generation))

    def owner_id(self, key, generation=0):
        """The id of the record that names the process holding ``claim_id(key, generation)``."""
        return ObjectId(OWNER_TAG + self._ns + self._digest(key, generation))

    # ---- reading ----------------------------------------------------------------------------------------

    def _load(self, oid, timeout=0):
        try:
            entry = self.client.get_object(oid, timeout=timeout)
        except ObjectMissingError:
            return False, None
        if not (isinstance(entry, tuple) and len(entry) == 4 and entry[0] == ENTRY_MAGIC):
            return False, None
        return True, entry

    def lookup(self, key):
        """``(True, value)`` when the value is cached, else ``(False, None)``; never waits."""
        found, entry = self._load(self.value_id(key))
        if found:
            self.hits += 1
            return True, entry[3]
        self.misses += 1
        return False, None

    def __contains__(self, key):
        return self.client.contains(self.value_id(key))

    def claim(self, key, generation=0):
        """A claim on computing ``key`` (pass it to ``put`` or ``release``), or None when another process holds
        it. ``generation`` > 0 claims take over from the holder of the one before (``get_or_claim``)."""
        try:
            marker = self.client.create(self.claim_id(key, generation), 0)
        except ObjectExistsError:
            return None
        claim = Claim(key, generation, marker, self.owner_id(key, generation))
        try:
            self._put_owner(claim.owner_id)
        except BaseException:
            self.release(claim)
            raise
        return claim

    def _put_owner(self, oid):
        """Records this process as the holder of a claim (a record a claimant that died left is replaced)."""
        for _ in range(2):
            try:
                self.client.put_object(oid, identity())
                return
            except ObjectExistsError:
                self.client.delete(oid)
            except DepotError:
                return  # no room even for this: waiters take the claimant for stopped after claim_timeout

    def claimant(self, key, generation=0):
        """``(pid, state)`` of the process holding ``key``'s claim of ``generation``, state being ``"running"``,
        ``"stopped"`` or ``"gone"``; ``(None, "unknown")`` when no record names it."""
        try:
            who = self.client.get_object(self.owner_id(key, generation), timeout=0)
        except DepotError:
            return None, "unknown"
        if not isinstance(who, int) or who <= 0:
            return None, "unknown"
        return who >> 32, state_of(who)

    def get_or_claim(self, key, timeout=None):
        """``(True, value)`` when the value is cached or another process computes it meanwhile (waits for its
        seal); ``(False, claim)`` when this process is to compute it. After ``claim_timeout`` seconds of waiting
        for a claimant that is stopped or gone, this process claims the key's next generation and computes it.
        Raises TimeoutError after ``timeout`` seconds (None: no limit)."""
        started = time.monotonic()
        deadline = None if timeout is None else started + timeout
        vid = self.value_id(key)
        generation = 0
        waiting_since = started
        while True:
            found, entry = self._load(vid)
            if found:
                self.hits += 1
                return True, entry[3]
            claim = self.claim(key, generation)
            if claim is not None:
                found, entry = self._load(vid)  # sealed just before the other's claim went
                if found:
                    self.release(claim)
                    self.hits += 1
                    return True, entry[3]
                self.misses += 1
                return False, claim
            # another process computes it: wait for its seal, a slice at a time, so that a claim given up
            # without a value (not worth keeping, failed, died) is noticed
            found, entry = self._load(vid, timeout=WAIT_SLICE)
            if found:
                self.hits += 1
                return True, entry[3]
            now = time.monotonic()
            if now - waiting_since >= self.claim_timeout:
                pid, state = self.claimant(key, generation)
                if state != "running":  # stopped, gone, or never said who it is: take over
                    generation += 1
                    waiting_since = now
                    continue
            if deadline is not None and now > deadline:
                pid, state = self.claimant(key, generation)
                raise TimeoutError("key %r is being computed by %s (%s); it did not finish within %s s"
                                   % (key, "another process" if pid is None else "process %d" % pid, state,
                                      timeout))

    # ---- writing ----------------------------------------------------------------------------------------

    def put(self, key, value, cost, claim=None):
        """Keeps ``value`` if it fits within the limit (``cost``: the seconds it took to compute), then gives up
        ``claim``. Returns True when stored."""
        try:
            nbytes = object_size(value)
            if nbytes > self.limit_bytes:
                return False
            try:
                self.client.put_object(self.value_id(key), (ENTRY_MAGIC, float(cost), nbytes, value), keep=self.keep)
            except ObjectExistsError:
                return False
            self._added_since_check += nbytes
            if self._added_since_check > self.limit_bytes // 8 or nbytes > self.limit_bytes // 2:
                self.shrink()
            return True
        finally:
            if claim is not None:
                self.release(claim)

    def release(self, claim):
        """Gives up a claim (after ``put``, or without a value)."""
        try:
            self.client.delete(claim.owner_id)
        except Exception:
            pass
        try:
            claim.marker.abort()
        except Exception:
            pass

    def entries(self):
        """``[(ObjectInfo, cost, nbytes)]`` of this cache's values in the store."""
        prefix = VALUE_TAG + self._ns
        out = []
        for info in self.client.list():
            if bytes(info.id)[:len(prefix)] == prefix and info.state == "sealed":
                found, entry = self._load(info.id)
                if found:
                    out.append((info, entry[1], entry[2]))
        return out

    def shrink(self):
        """Deletes the lowest-scoring values until the cache is within its limit."""
        self._added_since_check = 0
        entries = self.entries()
        total = sum(info.data_size for info, _, _ in entries)
        if total <= self.limit_bytes:
            return
        now = time.time()

        def score(item):
            info, cost, nbytes = item
            return cost / max(nbytes, 1) * 2.0 ** (-max(0.0, now - info.last_access) / self.halflife)

        for info, _, _ in sorted(entries, key=score):
            if total <= self.limit_bytes:
                break
            if self.client.delete(info.id):
                total -= info.data_size

    def clear(self):
        """Deletes every value of this cache."""
        for info, _, _ in self.entries():
            self.client.delete(info.id)


class Claim:
    """This process's claim on computing ``key``: the unsealed ``marker`` object of the claim's ``generation``
    and the id of the record naming this process (``SharedCache.claim``)."""

    __slots__ = ("key", "generation", "marker", "owner_id")

    def __init__(self, key, generation, marker, owner_id):
        self.key = key
        self.generation = generation
        self.marker = marker
        self.owner_id = owner_id

    def __repr__(self):
        return "Claim(%r, generation %d)" % (self.key, self.generation)


def _tokenize(*args, **kwargs):
    try:
        from dask.base import tokenize
    except ImportError:  # pragma: no cover - depends on the environment
        import pickle
        return hashlib.sha256(pickle.dumps((args, sorted(kwargs.items())), protocol=5)).hexdigest()
    return tokenize(*args, **kwargs)


def memoize(limit_bytes, dir=None, namespace=None, halflife=HALFLIFE_DEFAULT, claim_timeout=CLAIM_TIMEOUT_DEFAULT):
    """Caches a function's results in Depot for every process on the node.

    The key is the function's qualified name and a Dask token of its arguments. Two processes calling it with the
    same arguments at once compute once: the second waits for the first's result. A result the store cannot
    take (larger than the store, or the store full of pinned objects) is returned uncached, with a
    ``RuntimeWarning`` that says why.

    Parameters
    ----------
    limit_bytes : int
        The bytes of results kept, across every process using the function's namespace.
    dir : str, optional
        The store's directory (default: ``depot.default_directory()``); a daemon must serve it.
    namespace : str, optional
        Default: ``"memoize:"`` and the function's module and qualified name.
    halflife : float
        Seconds after which an unused result's score halves.
    claim_timeout : float
        Seconds a call waits for another process computing the same arguments before it looks at that
        process: when it is stopped (SIGSTOP, a debugger) or gone, the call computes the result itself.

    Returns
    -------
    The decorated function, with ``cache`` (its ``SharedCache``) and ``key(*args, **kwargs)`` (the cache's key
    for a call's arguments).

    Examples
    --------
    >>> @depot.cache.memoize(limit_bytes=1 << 30)      # doctest: +SKIP
    ... def features(path):
    ...     return expensive(path)
    """

    def decorate(fn):
        cache = SharedCache(limit_bytes, dir=dir, halflife=halflife, claim_timeout=claim_timeout,
                            namespace=namespace or "memoize:%s.%s" % (fn.__module__, fn.__qualname__))

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            key = _tokenize(*args, **kwargs)
            found, got = cache.get_or_claim(key)
            if found:
                return got
            try:
                start = default_timer()
                value = fn(*args, **kwargs)
                cost = default_timer() - start
            except BaseException:
                cache.release(got)
                raise
            try:
                cache.put(key, value, cost, claim=got)
            except DepotError as e:  # the store cannot take it (larger than the store, say): not cached
                warnings.warn("depot.cache.memoize returns %s's result uncached: %s" % (fn.__qualname__, e),
                              RuntimeWarning, stacklevel=2)
            return value

        wrapper.cache = cache
        wrapper.key = _tokenize  # the cache's key for a call's arguments
        return wrapper

    return decorate
