"""``depot.dask.share``: put a large object in Depot once and pass a reference to it into any number of tasks."""

import os
import weakref

from dask.delayed import Delayed
from dask.sizeof import sizeof

from depot import _task_context
from depot.client import default_directory
from depot.ids import ObjectId

from ._objects import buffers_of, get_object, put_object, shared_client

__all__ = ["Shared", "share"]

SHARE_TAG = b"DKSH"


class _Owner:
    """Pins the object while it is shared (so a full store cannot evict it) and deletes it when the last
    ``Shared`` and graph referring to it are gone (or on ``close``)."""

    def __init__(self, client, oid):
        pin = client.get(oid, timeout=0)
        self._finalizer = weakref.finalize(self, _delete, client, oid, pin)

    def close(self):
        self._finalizer()


def _delete(client, oid, pin):
    try:
        if not client.closed:
            pin.release()
            client.delete(oid)
    except Exception:
        pass


class SharedRef:
    """What a graph holds for a shared object: its id and size (and, in the process that shared it, the owner
    that keeps it alive; the owner does not travel)."""

    __slots__ = ("oid", "nbytes", "directory", "_owner")

    def __init__(self, oid, nbytes, directory, owner=None):
        self.oid = oid if isinstance(oid, ObjectId) else ObjectId(oid)
        self.nbytes = nbytes
        self.directory = directory
        self._owner = owner

    def __reduce__(self):
        return (SharedRef, (bytes(self.oid), self.nbytes, self.directory))

    def __dask_tokenize__(self):
        return ("depot-shared", self.oid.hex())

    def __repr__(self):
        return "SharedRef(%s, %d bytes)" % (self.oid.hex()[:12], self.nbytes)


def load(ref):
    """The shared object, read zero-copy: in a depot.dask worker its reference passes on (no copy); in any other
    process (threads, processes or the synchronous scheduler) it is read from the store directly."""
    context = _task_context.current()
    if context is not None and context.adopt is not None:
        return context.adopt(ref.oid, ref.nbytes, owned=False)
    return get_object(_task_context.client_for(ref.directory), ref.oid, timeout=0)


class Shared(Delayed):
    """A large object stored once in Depot, usable as a ``dask.delayed`` value: pass it into ``dask.delayed``
    calls, ``map_blocks`` or ``map_partitions`` and only its id travels; every worker maps the same memory.

    ``close()`` (or the end of a ``with`` block) deletes the object; so does garbage collection once neither this
    ``Shared`` nor any graph built from it is alive.
    """

    __slots__ = ("_ref",)

    def __init__(self, ref):
        key = "depot-shared-" + ref.oid.hex()
        super().__init__(key, {key: (load, ref)})
        object.__setattr__(self, "_ref", ref)

    @property
    def oid(self):
        return self._ref.oid

    @property
    def nbytes(self):
        """The bytes the object occupies in the store (what Dask's ``sizeof`` reports)."""
        return self._ref.nbytes

    def get(self):
        """The object itself (zero-copy), in this process."""
        return load(self._ref)

    def close(self):
        """Deletes the object from the store (deferred while a task still reads it)."""
        if self._ref._owner is not None:
            self._ref._owner.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __sizeof__(self):
        return self._ref.nbytes

    def __reduce__(self):
        return (Shared, (self._ref,))

    def __repr__(self):
        return "Shared(%s, %d bytes)" % (self.oid.hex()[:12], self.nbytes)


@sizeof.register(Shared)
def _sizeof_shared(s):
    return s.nbytes


@sizeof.register(SharedRef)
def _sizeof_ref(r):
    return r.nbytes


def share(obj, dir=None):
    """Stores ``obj`` in Depot once and returns a ``Shared`` reference to pass into tasks.

    Parameters
    ----------
    obj : object
        Any picklable object; its large buffers (NumPy arrays, pandas columns) are read zero-copy by every task.
    dir : str, optional
        The store's directory (default: ``depot.default_directory()``).

    Returns
    -------
    Shared
        A ``dask.delayed`` value whose token is the object's id.

    Examples
    --------
    >>> table = depot.dask.share(big_array)                       # doctest: +SKIP
    >>> parts = [dask.delayed(score)(table, i) for i in range(16)]  # doctest: +SKIP
    """
    directory = os.path.abspath(dir if dir is not None else default_directory())
    client = shared_client(directory)
    oid = ObjectId(SHARE_TAG + os.urandom(16))
    stream, buffers = buffers_of(obj)
    nbytes = len(stream) + sum(b.raw().nbytes for b in buffers)
    del stream, buffers
    put_object(client, oid, obj)
    return Shared(SharedRef(oid, nbytes, directory, _Owner(client, oid)))
