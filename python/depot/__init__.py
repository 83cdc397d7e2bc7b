"""Depot: a node-local shared-memory object store. This is its Python client (standard library only; NumPy
optional for arrays).

    import depot
    with depot.connect() as client:              # $DEPOT_DIR, else /dev/shm/depot-$USER
        oid = depot.ObjectId.of("example")
        client.put(oid, b"hello")
        with client.get(oid, timeout=1.0) as view:
            assert bytes(view.data) == b"hello"

See docs/PYTHON.md.
"""

from ._wire import VERSION_MAJOR, VERSION_MINOR
from .arrays import decode_array_metadata, encode_array_metadata, is_array_metadata
from .client import Client, connect, default_directory
from .errors import (ArgumentTypeError, BadRequestError, ClientClosedError, DaemonNotRunningError, DepotError,
                     NotSealedError, ObjectExistsError, ObjectLostError, ObjectMissingError, PermissionDeniedError, ProtocolError, ResourceLimitError, StoreFormatError,
                     StoreFullError, StoreNotFoundError, VersionMismatchError, ViewReleasedError)
from .daemon import Daemon, DaemonStartError, start
from .ids import ObjectId
from .notifications import Event, Subscription
from .pickling import ObjectFormatError
from .objects import ObjectInfo, ObjectView, ObjectWriter, StoreStats

PROTOCOL_VERSION = (VERSION_MAJOR, VERSION_MINOR)

__all__ = [
    "ArgumentTypeError", "BadRequestError", "Client", "ClientClosedError", "Daemon", "DaemonNotRunningError",
    "DaemonStartError", "DepotError", "Event", "NotSealedError", "ObjectExistsError", "ObjectFormatError",
    "ObjectId", "ObjectInfo", "ObjectLostError", "ObjectMissingError", "ObjectView", "ObjectWriter", "PROTOCOL_VERSION",
    "PermissionDeniedError", "ProtocolError", "ResourceLimitError", "StoreFormatError", "StoreFullError",
    "StoreNotFoundError", "StoreStats", "Subscription", "VersionMismatchError", "ViewReleasedError", "connect",
    "decode_array_metadata", "default_directory", "encode_array_metadata", "is_array_metadata", "start",
]
