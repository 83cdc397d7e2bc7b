"""Python objects in Depot, for depot.dask: ``client.put_object`` / ``client.get_object`` (pickle protocol 5,
out-of-band buffers zero-copy), and the process-wide clients that depot.dask hands out objects from.

TEMPORARY: until ``Client.put_object`` lands (branch h/pypkg), a private stand-in stores the pickle stream and
its out-of-band buffers in one object. It is used only when the client has no ``put_object``.
"""

import atexit
import pickle
import struct
import threading
import weakref

import depot

# ---- put / get -------------------------------------------------------------------------------------------


def put_object(client, oid, obj):
    """Stores ``obj`` under ``oid`` (sealed on return)."""
    native = getattr(client, "put_object", None)
    if native is not None:
        native(oid, obj)
    else:
        _shim_put(client, oid, obj)


def get_object(client, oid, timeout=None):
    """The object stored under ``oid``; its large buffers are read-only views of shared memory, pinned while
    any of them is alive."""
    native = getattr(client, "get_object", None)
    if native is not None:
        return native(oid, timeout=timeout)
    return _shim_get(client, oid, timeout)


def buffers_of(obj):
    """``(stream, buffers)``: ``obj`` pickled with protocol 5 (cloudpickle when plain pickle cannot), its large
    buffers kept out of band, not copied."""
    buffers = []
    try:
        stream = pickle.dumps(obj, protocol=5, buffer_callback=buffers.append)
    except (pickle.PicklingError, AttributeError, TypeError):
        import cloudpickle
        buffers = []
        stream = cloudpickle.dumps(obj, protocol=5, buffer_callback=buffers.append)
    return stream, buffers


def out_of_band_bytes(buffers):
    return sum(b.raw().nbytes for b in buffers)


# ---- the stand-in (removed when put_object lands) ---------------------------------------------------------

_SHIM_MAGIC = b"DDK0"
_SHIM_HEAD = struct.Struct("<4sQI")   # magic, stream length, buffer count; then count x (offset, length)
_SHIM_ENTRY = struct.Struct("<QQ")
_ALIGN = 64


def _shim_put(client, oid, obj):
    stream, buffers = buffers_of(obj)
    raws = [b.raw() for b in buffers]
    offset = len(stream)
    table = []
    for raw in raws:
        offset = -(-offset // _ALIGN) * _ALIGN
        table.append((offset, raw.nbytes))
        offset += raw.nbytes
    meta = _SHIM_HEAD.pack(_SHIM_MAGIC, len(stream), len(raws)) + b"".join(_SHIM_ENTRY.pack(*e) for e in table)
    with client.create(oid, offset, meta) as writer:
        data = writer.data
        data[:len(stream)] = stream
        for (at, n), raw in zip(table, raws):
            data[at:at + n] = raw
        del data
        writer.seal()


def _shim_get(client, oid, timeout):
    import numpy as np
    view = client.get(oid, timeout)
    try:
        magic, stream_length, count = _SHIM_HEAD.unpack_from(view.metadata)
        if magic != _SHIM_MAGIC:
            raise ValueError("object %s was not stored by put_object" % oid)
        table = [_SHIM_ENTRY.unpack_from(view.metadata, _SHIM_HEAD.size + i * _SHIM_ENTRY.size)
                 for i in range(count)]
        base = np.frombuffer(view.data, dtype=np.uint8)
        stream = bytes(view.data[:stream_length])
        obj = pickle.loads(stream, buffers=[base[at:at + n] for at, n in table])
    except BaseException:
        view.release()
        raise
    view._detach()
    client._views.discard(view)
    weakref.finalize(base, client._defer_release, bytes(view.id), client._epoch)
    return obj


# ---- process-wide clients ---------------------------------------------------------------------------------

_clients = {}
_clients_lock = threading.Lock()


def shared_client(directory, start=False, capacity=None):
    """This process's client of the store in ``directory`` (made on first use, closed at exit). Objects handed
    to the caller come from it, so they stay valid after a Scheduler closes. With ``start`` the store is
    started when no daemon serves it (``depot.connect(dir, start=True)``)."""
    import os
    key = os.path.abspath(directory)
    with _clients_lock:
        c = _clients.get(key)
        if c is None or c.closed:
            c = _connect(key, start, capacity)
            _clients[key] = c
        return c


def _connect(directory, start, capacity):
    import inspect
    try:
        takes_start = "start" in inspect.signature(depot.connect).parameters
    except (TypeError, ValueError):
        takes_start = False
    if start and takes_start:
        kwargs = {"start": True}
        if capacity is not None:
            kwargs["capacity"] = capacity
        return depot.connect(directory, **kwargs)
    return depot.connect(directory)


@atexit.register
def _close_clients():
    with _clients_lock:
        for c in _clients.values():
            try:
                c.close()
            except Exception:
                pass
        _clients.clear()
