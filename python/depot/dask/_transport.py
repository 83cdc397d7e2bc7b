"""The messages between the scheduler's pool and a worker process: one ``NamedTuple`` per kind, each pickled
alone (protocol 5) and sent as one frame of a ``multiprocessing.connection.Connection`` over a socket pair.

The pool starts a worker with ``PROTOCOL_VERSION`` on its command line; a worker whose own version differs says
so with ``Failed`` (whose shape never changes) and exits, and a worker's ``Ready`` carries its version, which the
pool checks too. Change ``PROTOCOL_VERSION`` with any change to a message below.

scheduler -> worker

    ``RunBatch``   run a batch (``body``: function, arguments and ``{key: result id}``, pickled with by-value
                   functions as numbers, see ``_functions``), after loading ``definitions`` and forgetting
                   ``forget`` in the function table and dropping the held results ``drops``; then run ``then``
                   (pickled like ``body``), the batch's continuations. Its frame ends with the batch id in 8
                   bytes, for a worker that cannot unpickle the rest (``batch_id_of``)
    ``Publish``    store these held results in Depot (other processes need them)
    ``Drop``       forget these held results (no task needs them any more)
    ``DropPrefix`` forget every held result whose id starts with ``prefix``
    ``Unqueue``    give this batch back if it has not started
    ``Stop``       exit

worker -> scheduler

    ``Ready``      connected to the store, with its pid and protocol version
    ``Failed``     could not start (the traceback, or the version mismatch)
    ``Results``    a batch ran: ``[(key, Held | Stored | Inline | (exception, traceback), failed)]``, then its
                   continuations' ``(key, result, failed, True)``, and ``{key: seconds it ran}``
    ``Unqueued``   that batch was given back and will not run here
    ``Unreadable`` that batch could not be read (its traceback)
"""

import pickle
from typing import NamedTuple, Optional

PROTOCOL_VERSION = 1
#: the environment variable that carries the scheduler's ``sys.path`` (JSON) to a worker it starts
SYS_PATH_ENV_NAME = "DEPOT_DASK_SYS_PATH"
#: the bytes of the batch id at the end of a ``RunBatch`` frame (little-endian)
BATCH_ID_BYTES = 8


class RunBatch(NamedTuple):
    batch_id: int
    definitions: dict
    forget: list
    body: bytes
    drops: list
    then: Optional[bytes]


class Publish(NamedTuple):
    raws: list


class Drop(NamedTuple):
    raws: list


class DropPrefix(NamedTuple):
    prefix: bytes


class Unqueue(NamedTuple):
    batch_id: int


class Stop(NamedTuple):
    pass


class Ready(NamedTuple):
    pid: int
    version: int


class Failed(NamedTuple):
    text: str


class Results(NamedTuple):
    batch_id: int
    results: list
    seconds: dict


class Unqueued(NamedTuple):
    batch_id: int


class Unreadable(NamedTuple):
    batch_id: int
    text: str


def encode(message):
    """``message``'s frame; a ``RunBatch``'s ends with its batch id (``batch_id_of``)."""
    data = pickle.dumps(message, protocol=5)
    if type(message) is RunBatch:
        data += message.batch_id.to_bytes(BATCH_ID_BYTES, "little")
    return data


def decode(data):
    """The message of a frame (pickle ignores the bytes after the pickle: a ``RunBatch``'s batch id)."""
    return pickle.loads(data)


def batch_id_of(data):
    """The batch id at the end of a ``RunBatch`` frame whose pickle could not be read."""
    if len(data) < BATCH_ID_BYTES:
        raise ValueError("a batch frame of %d bytes is shorter than its %d-byte batch id"
                         % (len(data), BATCH_ID_BYTES))
    return int.from_bytes(data[-BATCH_ID_BYTES:], "little")


def version_mismatch(theirs):
    """The ``Failed`` text of a worker whose protocol version differs from the pool's ``theirs``, else None."""
    if theirs == PROTOCOL_VERSION:
        return None
    return ("its message protocol is version %s and the scheduler's is %s: the worker imported another depot "
            "package than the scheduler's process (check sys.path and PYTHONPATH)" % (PROTOCOL_VERSION, theirs))


__all__ = ["PROTOCOL_VERSION", "RunBatch", "Publish", "Drop", "DropPrefix", "Unqueue", "Stop", "Ready", "Failed",
           "Results", "Unqueued", "Unreadable", "encode", "decode", "batch_id_of", "version_mismatch"]
