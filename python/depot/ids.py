"""Object ids: 20 bytes, as in Plasma and the Java client (``dev.depot.client.ObjectId``)."""

import hashlib
import os

ID_LENGTH = 20


class ObjectId:
    """A 20-byte object id. Immutable, hashable; ``bytes(oid)`` gives the raw bytes."""

    __slots__ = ("_bytes",)

    def __init__(self, raw):
        raw = bytes(raw)
        if len(raw) != ID_LENGTH:
            raise ValueError("an object id is %d bytes, got %d" % (ID_LENGTH, len(raw)))
        object.__setattr__(self, "_bytes", raw)

    @classmethod
    def random(cls):
        """A random id (from ``os.urandom``)."""
        return cls(os.urandom(ID_LENGTH))

    @classmethod
    def from_hex(cls, text):
        """Parses 40 hex digits."""
        if len(text) != 2 * ID_LENGTH:
            raise ValueError("an object id is %d hex digits, got %d: %r" % (2 * ID_LENGTH, len(text), text))
        try:
            return cls(bytes.fromhex(text))
        except ValueError:
            raise ValueError("not a hex object id: %r" % (text,)) from None

    @classmethod
    def of(cls, name):
        """The id named ``name``: the first 20 bytes of SHA-256 of its UTF-8 bytes (as Java's ``ObjectId.of``)."""
        return cls(hashlib.sha256(name.encode("utf-8")).digest()[:ID_LENGTH])

    def hex(self):
        return self._bytes.hex()

    def __bytes__(self):
        return self._bytes

    def __setattr__(self, name, value):
        raise AttributeError("ObjectId is immutable")

    def __eq__(self, other):
        return isinstance(other, ObjectId) and other._bytes == self._bytes

    def __hash__(self):
        return hash(self._bytes)

    def __str__(self):
        return self.hex()

    def __repr__(self):
        return "ObjectId(%r)" % self.hex()


def as_id(value):
    """An ObjectId from an ObjectId or 20 raw bytes."""
    if isinstance(value, ObjectId):
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return ObjectId(value)
    raise TypeError("an object id is an ObjectId or 20 bytes, got %s; use ObjectId.of(name) for a name"
                    % type(value).__name__)
