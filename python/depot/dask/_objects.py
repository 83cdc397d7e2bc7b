"""Python objects in Depot, for depot.dask: ``client.put_object`` / ``client.get_object`` (pickle protocol 5,
out-of-band buffers zero-copy), and the process-wide clients that depot.dask hands out objects from."""

import pickle

from .. import _shared_clients

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

#: this process's client of a store (made on first use, closed at exit): objects handed to the caller come from
#: it, so they stay valid after a Scheduler closes
shared_client = _shared_clients.shared_client
