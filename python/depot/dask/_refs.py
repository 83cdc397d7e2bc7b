"""What travels between the scheduler and its workers in place of a task's result.

A result whose pickle (stream and buffers) is at least ``inline_bytes`` stays in the memory of the worker that
computed it and travels as a ``Held`` (its id, size and holder); the holder stores it in Depot under that id only
when a task in another process, or the caller, needs it (the scheduler asks it to ``publish``). A result already
in Depot travels as a ``Stored`` (its id and size); a small one as an ``Inline`` (its pickle stream and buffers,
deserialised only where it is used). The scheduler's own process never deserialises an intermediate result.
"""

import pickle

from depot.ids import ObjectId


class Stored:
    """A result in Depot: ``oid`` and the bytes of its buffers. ``owned`` is False for objects the scheduler did
    not make (``share``), which it never deletes."""

    __slots__ = ("oid", "nbytes", "owned")

    def __init__(self, oid, nbytes, owned=True):
        self.oid = oid if isinstance(oid, ObjectId) else ObjectId(oid)
        self.nbytes = nbytes
        self.owned = owned

    def __reduce__(self):
        return (Stored, (bytes(self.oid), self.nbytes, self.owned))

    def __repr__(self):
        return "Stored(%s, %d bytes%s)" % (ObjectId(bytes(self.oid)).hex()[:12], self.nbytes,
                                           "" if self.owned else ", shared")


class Inline:
    """A small result: its pickle stream and out-of-band buffers as bytes."""

    __slots__ = ("stream", "buffers")

    def __init__(self, stream, buffers):
        self.stream = stream
        self.buffers = buffers

    @property
    def nbytes(self):
        return len(self.stream) + sum(len(b) for b in self.buffers)

    def load(self):
        return pickle.loads(self.stream, buffers=self.buffers)

    def __reduce__(self):
        return (Inline, (self.stream, self.buffers))

    def __repr__(self):
        return "Inline(%d bytes)" % self.nbytes


class Held:
    """A large result kept by the worker process ``holder`` (a pid) that computed it, not yet in Depot: a task on
    that worker reads it from the worker's memory; anyone else waits for it in Depot under ``oid``, where the holder
    puts it when the scheduler asks (``publish``)."""

    __slots__ = ("oid", "nbytes", "holder")

    def __init__(self, oid, nbytes, holder):
        self.oid = oid if isinstance(oid, ObjectId) else ObjectId(oid)
        self.nbytes = nbytes
        self.holder = holder

    def __reduce__(self):
        return (Held, (bytes(self.oid), self.nbytes, self.holder))

    def __repr__(self):
        return "Held(%s, %d bytes, worker %d)" % (ObjectId(bytes(self.oid)).hex()[:12], self.nbytes, self.holder)


class PublishFailed:
    """Stored under a ``Held`` result's id in place of the result when its holder could not store it (it is not
    picklable by plain pickle, say): whoever waits for it gets the holder's traceback instead of waiting forever.
    ``store_full`` is the message of the holder's ``StoreFullError`` when the store had no room for it, else
    None."""

    def __init__(self, text, store_full=None):
        self.text = text
        self.store_full = store_full
