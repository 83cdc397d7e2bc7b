"""A node-wide cache of a map-style Dataset's samples, shared by every DataLoader worker of every training
process on the node, built on ``depot.cache.SharedCache`` (its claims make a sample decoded once)."""

import hashlib
import operator
import os
import pickle
import warnings
from timeit import default_timer

from .. import cache as shared_cache
from ..client import default_directory
from ..errors import DepotError
from ._heap import release_free_heap
from ._import import torch_module
from ._workers import settle_worker
from .samples import pack

__all__ = ["SharedCache"]

#: ``limit_bytes=None``: no limit of the cache's own; the store's capacity (and its LRU eviction) bounds it
UNLIMITED = 1 << 62
#: a worker gives its C heap's free pages back to the OS after this many decoded samples are in the store
#: (``depot.torch._heap``: each return costs about as much as a small decode, so not after every one)
TRIM_EVERY = 8


def _default_namespace(dataset):
    """``torch:`` with the dataset's class and a digest of its pickle: the same in every process that builds
    the same dataset."""
    kind = "%s.%s" % (type(dataset).__module__, type(dataset).__qualname__)
    try:
        digest = hashlib.sha256(pickle.dumps(dataset, protocol=5)).hexdigest()[:16]
    except Exception as e:
        raise TypeError("SharedCache names a dataset's cache by its pickle, and %s does not pickle (%s): pass "
                        "namespace= (the same string in every process that reads this dataset)" % (kind, e)) from None
    return "torch:%s:%s" % (kind, digest)


class SharedCache(torch_module().utils.data.Dataset):
    """A map-style Dataset that decodes each sample of ``dataset`` once for the whole node.

    The first worker (of any process using the same store and namespace) that needs sample ``i`` claims it,
    decodes it with ``dataset[i]`` and stores it in Depot; every other worker, process and later epoch reads it
    from there, its tensors zero-copy views of the one copy in shared memory (read-only by contract:
    ``depot.torch.views``). Two workers that need the same sample at once decode it once: the second waits for
    the first's value. A worker that dies while decoding (killed, out of memory) leaves no claim behind: the
    daemon aborts it and a waiter decodes the sample instead.

    Parameters
    ----------
    dataset : torch.utils.data.Dataset
        Map-style; its samples are tensors, NumPy arrays, numbers, strings, or tuples, lists and dicts of
        them (tensors elsewhere are stored but read back as copies).
    limit_bytes : int, optional
        The bytes of samples this cache keeps; beyond it the least valuable go (``depot.cache``: decode time per
        byte, decayed since last use). None: no limit of its own; the store bounds it (evictable samples go
        least recently used first when the store needs room).
    keep : bool
        Samples the store never evicts: a daemon with a spill directory spills them to disk when it needs room
        and a read brings them back. Without a spill directory, a sample that does not fit is returned
        uncached (with one ``RuntimeWarning`` per process).
    dir : str, optional
        The store's directory (default ``depot.default_directory()``); a daemon must serve it.
    namespace : str, optional
        Caches share samples when their namespaces are equal. Default: the dataset's class and a digest of its
        pickle, equal in every process that builds the same dataset. Pass your own when the pickle differs
        between processes (a set of strings does, between interpreters) or does not exist.
    claim_timeout : float
        Seconds a worker waits for another decoding the same sample before it looks whether that one is
        stopped or gone (then decodes it itself).

    Examples
    --------
    >>> cached = depot.torch.SharedCache(ImageFolder(root, transform), limit_bytes=8 << 30)   # doctest: +SKIP
    >>> loader = DataLoader(cached, batch_size=64, num_workers=4, shuffle=True)             # doctest: +SKIP
    """

    def __init__(self, dataset, limit_bytes=None, keep=False, dir=None, namespace=None,
                 claim_timeout=shared_cache.CLAIM_TIMEOUT_DEFAULT):
        self.dataset = dataset
        self.directory = os.path.abspath(dir if dir is not None else default_directory())
        self.namespace = namespace if namespace is not None else _default_namespace(dataset)
        self.keep = bool(keep)
        self.cache = shared_cache.SharedCache(UNLIMITED if limit_bytes is None else limit_bytes, self.directory,
                                              namespace=self.namespace, claim_timeout=claim_timeout, keep=keep)
        #: samples this process decoded (in the process it counts in: each DataLoader worker has its own)
        self.decoded = 0
        self._warned = False

    def __len__(self):
        return len(self.dataset)

    def __getitem__(self, index):
        settle_worker()
        key = operator.index(index) if hasattr(index, "__index__") else index
        found, got = self.cache.get_or_claim(key)
        if found:
            return got
        try:
            start = default_timer()
            sample = self.dataset[index]
            cost = default_timer() - start
        except BaseException:
            self.cache.release(got)
            raise
        self.decoded += 1
        try:
            stored = self.cache.put(key, pack(sample), cost, claim=got)
        except DepotError as e:
            stored = False
            if not self._warned:
                self._warned = True
                warnings.warn("depot.torch.SharedCache returns samples uncached: the store cannot take them (%s)"
                              % e, RuntimeWarning, stacklevel=2)
        if stored:
            # The stored copy, not the decoded one: the decoded sample is freed now, not when its batch is
            # collated, and its pages (and its decode's) go back to the OS: the store's copy is the only one.
            found, value = self.cache.lookup(key)
            if found:
                del sample
                if self.decoded % TRIM_EVERY == 0:
                    release_free_heap()
                return value
        return sample

    def clear(self):
        """Deletes every cached sample of this namespace (in every process's view)."""
        self.cache.clear()

    def __repr__(self):
        return "SharedCache(%r, namespace=%r%s)" % (self.dataset, self.namespace, ", keep" if self.keep else "")
