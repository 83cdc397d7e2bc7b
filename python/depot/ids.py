"""Object ids: 20 bytes, as in Plasma and the Java client (``dev.depot.client.ObjectId``)."""

import hashlib
import os

from .errors import ArgumentTypeError, BadRequestError

ID_LENGTH = 20


class ObjectId:
    """A 20-byte object id. Immutable, hashable; ``bytes(oid)`` gives the raw bytes."""

    __slots__ = ("_bytes",)

    def __init__(self, raw):
        if not isinstance(raw, (bytes, bytearray, memoryview)):
            raise ArgumentTypeError("an object id is made of %d bytes, got %s %r; use ObjectId.of(name) for a name"
                                    % (ID_LENGTH, type(raw).__name__, raw))
        raw = bytes(raw)
        if len(raw) != ID_LENGTH:
            raise BadRequestError("an object id is %d bytes, got %d" % (ID_LENGTH, len(raw)))
        object.__setattr__(self, "_bytes", raw)

    @classmethod
    def random(cls):
        """A random id (from ``os.urandom``)."""
        return cls(os.urandom(ID_LENGTH))

    @classmethod
    def from_hex(cls, text):
        """Parses 40 hex digits."""
        if not isinstance(text, str):
            raise ArgumentTypeError("from_hex takes a str of %d hex digits, got %s" % (2 * ID_LENGTH, type(text).__name__))
        if len(text) != 2 * ID_LENGTH:
            raise BadRequestError("an object id is %d hex digits, got %d: %r" % (2 * ID_LENGTH, len(text), text))
        try:
            return cls(bytes.fromhex(text))
        except ValueError:
            raise BadRequestError("not a hex object id: %r" % (text,)) from None

    @classmethod
    def of(cls, name):
        """The id named ``name``: the first 20 bytes of SHA-256 of its UTF-8 bytes (as Java's ``ObjectId.of``)."""
        if not isinstance(name, str):
            raise ArgumentTypeError("ObjectId.of takes a str name, got %s" % type(name).__name__)
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
    raise ArgumentTypeError("an object id is an ObjectId or 20 bytes, got %s; use ObjectId.of(name) for a name"
                    % type(value).__name__)
