"""Exceptions of the Depot client.

The daemon reports failures with a wire error code (``dev.depot.errors.ErrorCode`` in Java); ``_BY_CODE`` is the
one table that maps each code to the exception raised here.
"""


class DepotError(Exception):
    """Base of every Depot failure. ``code`` is the wire error code (see docs/PROTOCOL.md)."""

    code = 1


class BadRequestError(DepotError, ValueError):
    """A value out of range (a size, a timeout, metadata over the limit), found by the client or the daemon.
    The message names the value and the limit."""

    code = 2


class ArgumentTypeError(DepotError, TypeError):
    """An argument of the wrong type (a bool or float as a size, a str as an id)."""

    code = 2


class ObjectMissingError(DepotError):
    """The object does not exist, or was not sealed within the timeout."""

    code = 3


class ObjectLostError(ObjectMissingError):
    """A get waited for a spilled object that the daemon could not restore because its spill file is missing or
    damaged: the object is gone (the daemon dropped it), never served from a bad file. The message names the
    object, the file and the damage."""


class StoreFullError(DepotError):
    """A create did not fit even after evicting every unpinned object (or eviction was off)."""

    code = 4


class ObjectExistsError(DepotError):
    """An object with this id exists already (sealed or being created)."""

    code = 5


class NotSealedError(DepotError):
    code = 6


class ResourceLimitError(DepotError):
    """A fixed-size table of the store is full (client slots, or the daemon's pins)."""

    code = 7


class StoreFormatError(DepotError):
    code = 9


class StoreNotFoundError(DepotError):
    """There is no store in the directory."""

    code = 10


class DaemonNotRunningError(StoreNotFoundError):
    """No daemon serves the directory: start one with ``depot serve --dir DIR``."""


class VersionMismatchError(DepotError):
    """The daemon speaks another major version of the control protocol."""

    code = 11


class PermissionDeniedError(DepotError):
    """The daemon serves another user."""

    code = 12


class ProtocolError(DepotError):
    """The daemon's reply broke the protocol, or the connection to it was lost."""


class StoreBusyError(DepotError):
    """A live process held the store's allocator lock for the whole wait (stopped with SIGSTOP, say)."""


class ViewReleasedError(DepotError, ValueError):
    """A view, writer or client was used after it was released, sealed, aborted or closed."""


class ClientClosedError(ViewReleasedError):
    """The client was closed."""


_BY_CODE = {
    1: DepotError,
    2: BadRequestError,
    3: ObjectMissingError,
    4: StoreFullError,
    5: ObjectExistsError,
    6: NotSealedError,
    7: ResourceLimitError,
    8: ResourceLimitError,
    9: StoreFormatError,
    10: StoreNotFoundError,
    11: VersionMismatchError,
    12: PermissionDeniedError,
}


def from_wire(code, message):
    """The exception for an ERROR reply's code and message."""
    error = _BY_CODE.get(code, DepotError)(message)
    error.code = code
    return error
