"""What travels between the scheduler and its workers in place of a task's result.

A result whose pickle (stream and buffers) is at least ``inline_bytes`` is stored in Depot by the worker that
computed it and travels as a ``Stored`` (its id and size); a smaller one travels as an ``Inline`` (its pickle
stream and buffers, deserialised only where it is used). The scheduler's own process never deserialises an
intermediate result.
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
