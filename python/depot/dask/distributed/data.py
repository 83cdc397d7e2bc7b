"""``DepotData``: a worker's ``data=`` mapping that keeps results holding buffers in the node's Depot store.

A value whose size (``dask.sizeof``) is at least ``inline_bytes`` is written once into Depot with
``put_object`` (pickle protocol 5: its buffers are copied once into shared memory) as a KEEP object, and the
mapping keeps only its id, so the worker's own copy can be collected. Reading the key gets the object again,
zero-copy (a get is a few microseconds of shared-memory atomics), pinned while the value is in use; an object
nobody uses is not pinned, so a daemon with a spill directory can spill it under pressure and a later get
restores it. Smaller values stay in an ordinary dictionary, like Dask's default mapping.

While the worker answers a ``get_data`` request from a peer that serves the same store (see ``comm``), the
mapping hands out a ``DepotRef`` (id and size) instead of the value: Dask then serialises 60 bytes instead
of the data. The receiving worker's mapping resolves a ``DepotRef`` it is given with ``get_object`` and keeps that
zero-copy object (pinned: the writer may delete its object while this worker still holds the key): the data
is read in place, never copied into the second worker.

A value handed to ``keep_private`` before the worker stores it (a DataFrame shuffle's output partition, which the
task after it on this worker usually reads) stays in process memory like a small one, and goes into Depot
only when a peer of the same store first asks for it: then it is copied once into shared memory and the peer
gets its id, as for any other shared value. So a partition that never leaves its worker costs no shared
pages, and one that does still crosses by id. A result the worker computed from private values only
(``derive_private``: the column the task after a shuffle selects, which shares the partition's buffers) is kept
private the same way, instead of being copied into the store.

Lifetimes: the worker that wrote an object deletes it when Dask removes the key from its mapping (the delete
is deferred by Depot while other workers still pin it, and they keep reading it); a worker that only reads
an object drops its pin. A worker killed with SIGKILL leaves its objects behind: ids carry the writer's pid
and start time, and ``sweep_dead_writers`` (run by every Depot worker periodically) deletes the objects of
writers that are no longer alive.
"""

from __future__ import annotations

import contextvars
import hashlib
import os
import sys
import threading
import warnings
import weakref
from collections.abc import MutableMapping

from dask.sizeof import sizeof

from ... import _process
from ...errors import DepotError, ObjectMissingError, ProtocolError, StoreFullError
from ...ids import ObjectId
from .._ids import RESULT_ID_LAYOUT, RESULT_ID_MAGIC

__all__ = ["DepotData", "DepotRef", "sending_by_id", "sweep_dead_writers", "writer_of"]

DEFAULT_INLINE_BYTES = 64 * 1024

# Object id of a worker result: magic (4) | writer pid (4) | writer start ticks, low 32 bits (4) | key hash (8).
ID_MAGIC = RESULT_ID_MAGIC
ID_LAYOUT = RESULT_ID_LAYOUT

#: True while the current task (asyncio context) answers a peer that serves the same store.
_by_id = contextvars.ContextVar("depot_send_by_id", default=False)


class sending_by_id:
    """Context manager: inside it, ``DepotData.__getitem__`` hands out ``DepotRef``s for shared values."""

    def __enter__(self):
        self._token = _by_id.set(True)
        return self

    def __exit__(self, *exc):
        _by_id.reset(self._token)


class DepotRef:
    """What travels between two workers of one store instead of the data: the object's id and size."""

    __slots__ = ("oid", "nbytes")

    def __init__(self, oid, nbytes):
        self.oid = oid
        self.nbytes = nbytes

    def __reduce__(self):
        return DepotRef, (bytes(self.oid), self.nbytes)

    def __repr__(self):
        return "DepotRef(%s, %d bytes)" % (ObjectId(self.oid).hex() if isinstance(self.oid, bytes) else self.oid,
                                           self.nbytes)


@sizeof.register(DepotRef)
def _sizeof_ref(ref):
    return ref.nbytes


def writer_of(oid):
    """(pid, start ticks low 32 bits) of the worker that wrote a result object, or None for other objects."""
    raw = bytes(oid)
    magic, pid, start, _ = ID_LAYOUT.unpack(raw)
    return (pid, start) if magic == ID_MAGIC else None


def _alive(pid, start_low):
    """The writer is the process it was (pid and start time, as client identities are checked)."""
    return _process.identity_of(pid) == (pid << 32) | start_low


def once_more_after_restart(call, *args, **kwargs):
    """``call(*args, **kwargs)``, once more if it found the daemon gone: the client's next request goes to the
    daemon that took over the store (the request that met the dead connection cannot know what it did)."""
    try:
        return call(*args, **kwargs)
    except ProtocolError:
        return call(*args, **kwargs)


def sweep_dead_writers(client):
    """Deletes every worker-result object whose writer process is dead; returns how many were deleted.

    Readers that still pin such an object keep reading it (the delete is deferred until they release)."""
    deleted = 0
    for info in once_more_after_restart(client.list):
        writer = writer_of(info.id)
        if writer is not None and not _alive(*writer):
            try:
                if client.delete(info.id):
                    deleted += 1
            except DepotError:
                pass  # already being deleted or evicted by someone else
    return deleted


def _shuffle_slices(value):
    """The ids of the slices a DataFrame shuffle map wrote, when ``value`` is its ``MapOutput``; else None."""
    tasks = sys.modules.get("depot.dask._shuffle_tasks")  # not loaded: no value can be one
    if tasks is None or not isinstance(value, tasks.MapOutput):
        return None
    return value.slice_ids()


#: How long reading a key may wait for its object to be restored from the spill directory.
RESTORE_TIMEOUT_S = 300


class _Shared:
    """A value held in Depot: its id, its size, whether this worker wrote it, and (for objects another worker
    wrote) the pinned zero-copy object."""

    __slots__ = ("oid", "value", "nbytes", "owned")

    def __init__(self, oid, value, nbytes, owned):
        self.oid = oid
        self.value = value
        self.nbytes = nbytes
        self.owned = owned


class DepotData(MutableMapping):
    """A worker's data mapping backed by a Depot client (see the module docstring).

    Parameters
    ----------
    client : depot.Client
        The worker's connection to the node's store.
    inline_bytes : int
        Values smaller than this stay in process memory and travel as Dask serialises them.
    counters : dict, optional
        Where transfer counts are added up (``sent_by_id``, ``sent_by_id_bytes``, ``sent_plain`` (to a peer
        of the same store), ``received_by_id``, ``received_by_id_bytes``, ``stored``, ``stored_bytes``,
        ``store_full``, ``kept_private`` (values stored private by ``keep_private``), ``derived_private``
        (results made from private values only, kept private too: ``derive_private``), ``published`` (of
        the private values, the ones a peer asked for, then stored)).
    """

    def __init__(self, client, inline_bytes=DEFAULT_INLINE_BYTES, counters=None):
        self.client = client
        self.inline_bytes = int(inline_bytes)
        self.counters = counters if counters is not None else {}
        self._inline = {}
        self._shared = {}
        #: keys of ``_inline`` values that go into Depot when a peer of the same store asks for them
        self._on_demand = set()
        #: id(value) -> weak reference, for values that ``keep_private`` was told about and not stored yet
        self._private_next = {}
        #: keys whose next value is kept private because the task computing it reads private values only
        self._private_keys = set()
        #: called with (key, slice ids) when a DataFrame shuffle map's output leaves this mapping (the worker
        #: deletes the slices no reducer read once no worker holds the key); None: left alone
        self.on_slices_dropped = None
        self._lock = threading.RLock()
        identity = _process.identity()
        self._id_prefix = (ID_MAGIC, identity >> 32, identity & 0xFFFFFFFF)
        self._nonce = os.urandom(8)

    def _count(self, name, amount=1):
        self.counters[name] = self.counters.get(name, 0) + amount

    def object_id(self, key):
        """The id under which this worker stores ``key``: unique per worker process, tagged with its pid."""
        digest = hashlib.sha256(self._nonce + repr(key).encode("utf-8")).digest()[:8]
        return ObjectId(ID_LAYOUT.pack(*self._id_prefix, digest))

    def keep_private(self, value):
        """When ``value`` is stored next (as the result of the task running now), keep it in process memory
        and put it into Depot only when a peer of the same store asks for it. For results that are usually
        read on this worker only (a DataFrame shuffle's partitions): no shared pages unless they travel."""
        try:
            ref = weakref.ref(value)
        except TypeError:
            return  # not weakly referenceable: stored as any other value
        with self._lock:
            self._private_next[id(value)] = ref

    def derive_private(self, key, dependencies):
        """Keeps the value next stored under ``key`` private (as ``keep_private``) when its task reads only
        private values: ``dependencies``, the keys it reads, are all private here. Such a result is usually a
        view of them (a column of a shuffle's partition): copying it into the store would cost shared pages
        and a copy, for a value that, like its inputs, is mostly read on this worker. Values smaller than
        ``inline_bytes`` stay inline as always. True when it will be kept private."""
        with self._lock:
            if not dependencies or not all(k in self._on_demand for k in dependencies):
                self._private_keys.discard(key)
                return False
            self._private_keys.add(key)
            return True

    def _is_kept_private(self, value):
        ref = self._private_next.pop(id(value), None)
        if len(self._private_next) > 64:  # values that were never stored (their task failed): forget the dead
            self._private_next = {k: r for k, r in self._private_next.items() if r() is not None}
        return ref is not None and ref() is value

    # ---- MutableMapping ---------------------------------------------------------------------------------

    def __setitem__(self, key, value):
        with self._lock:
            if key in self:
                del self[key]
            if isinstance(value, DepotRef):
                self._adopt(key, value)
                return
            if self._private_next and self._is_kept_private(value):
                self._inline[key] = value
                self._on_demand.add(key)
                self._count("kept_private")
                self._private_keys.discard(key)
                return
            nbytes = sizeof(value)
            if self._private_keys and key in self._private_keys:
                self._private_keys.discard(key)
                if nbytes >= self.inline_bytes:
                    self._inline[key] = value
                    self._on_demand.add(key)
                    self._count("derived_private")
                    return
            if nbytes >= self.inline_bytes and self._store(key, value, nbytes):
                return
            self._inline[key] = value

    def _adopt(self, key, ref):
        """A peer of the same store sent an id: read the object in place (pinned while we hold it)."""
        oid = ObjectId(ref.oid)
        value = self.client.get_object(oid, timeout=0)
        self._shared[key] = _Shared(oid, value, ref.nbytes, owned=False)
        self._count("received_by_id")
        self._count("received_by_id_bytes", ref.nbytes)

    def _put(self, oid, value):
        # KEEP: never evicted while a worker holds the key; under pressure the daemon spills it to disk.
        once_more_after_restart(self.client.put_object, oid, value, keep=True)

    def _store(self, key, value, nbytes):
        oid = self.object_id(key)
        try:
            self._put(oid, value)
        except StoreFullError as e:
            # Keep it in process memory rather than lose it; Dask's own memory management takes over.
            self._count("store_full")
            warnings.warn("Depot store full, keeping %r in worker memory: %s" % (key, e), RuntimeWarning)
            return False
        self._shared[key] = _Shared(oid, None, nbytes, owned=True)
        self._count("stored")
        self._count("stored_bytes", nbytes)
        return True

    def __getitem__(self, key):
        shared = self._shared.get(key)
        by_id = _by_id.get()
        if shared is None:
            if by_id and key in self._on_demand:
                shared = self._publish(key)
        if shared is None:
            value = self._inline[key]
            if by_id:
                self._count("sent_plain")
            return value
        if by_id:
            if self._still_live(shared):
                self._count("sent_by_id")
                self._count("sent_by_id_bytes", shared.nbytes)
                return DepotRef(bytes(shared.oid), shared.nbytes)
            self._count("sent_plain")
        if shared.value is not None:
            return shared.value
        return self.client.get_object(shared.oid, timeout=RESTORE_TIMEOUT_S)

    def _publish(self, key):
        """Stores a value kept private because a peer of the same store asks for it; its ``_Shared``, or None
        when it stays private (the store is full: it travels as bytes)."""
        with self._lock:
            if key not in self._on_demand:
                return self._shared.get(key)
            value = self._inline[key]
            if not self._store(key, value, sizeof(value)):
                return None
            self._on_demand.discard(key)
            del self._inline[key]
            self._count("published")
            return self._shared[key]

    def _still_live(self, shared):
        """A peer can only get what is not deleted yet (an object we read from a writer that has since dropped
        it is still pinned by us, but no longer gettable): then it travels as bytes instead."""
        try:
            return self.client.contains(shared.oid)
        except DepotError:
            return False

    def __delitem__(self, key):
        with self._lock:
            self._private_keys.discard(key)
            shared = self._shared.pop(key, None)
            if shared is None:
                value = self._inline.pop(key)
                self._on_demand.discard(key)
                if self.on_slices_dropped is not None:
                    slices = _shuffle_slices(value)
                    if slices:
                        self.on_slices_dropped(key, slices)
                return
            shared.value = None  # drops our pin once nothing else in this process uses the object
            if shared.owned:
                try:
                    self.client.delete(shared.oid)
                except (ObjectMissingError, DepotError):
                    pass

    def __contains__(self, key):
        return key in self._shared or key in self._inline

    def __iter__(self):
        yield from list(self._inline)
        yield from list(self._shared)

    def __len__(self):
        return len(self._inline) + len(self._shared)

    def shared_bytes(self):
        """Bytes of values held in shared memory (counted by the kernel in this process's RSS once touched)."""
        return sum(s.nbytes for s in list(self._shared.values()))

    def is_shared(self, key):
        return key in self._shared

    def clear(self):
        for key in list(self):
            del self[key]

    def __repr__(self):
        return "<DepotData: %d in Depot (%d bytes), %d inline>" % (len(self._shared), self.shared_bytes(),
                                                                     len(self._inline))
