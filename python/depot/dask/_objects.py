"""Python objects in Depot, for depot.dask: ``client.put_object`` / ``client.get_object`` (pickle protocol 5,
out-of-band buffers zero-copy), and the process-wide clients that depot.dask hands out objects from."""

import atexit
import pickle
import threading

import depot

# ---- put / get -------------------------------------------------------------------------------------------


def put_object(client, oid, obj):
    """Stores ``obj`` under ``oid`` (sealed on return): ``Client.put_object``, pickle protocol 5 with the large
    buffers written straight into shared memory."""
    client.put_object(oid, obj)


def get_object(client, oid, timeout=None):
    """The object stored under ``oid``; its large buffers are read-only views of shared memory, pinned while
    any of them is alive (``Client.get_object``)."""
    return client.get_object(oid, timeout=timeout)


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
