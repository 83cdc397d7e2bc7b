"""This process's shared clients, one per store directory: the client that code outside any Depot scheduler's
task (a plain caller, Dask's threaded, process and synchronous schedulers) uses, and that depot.dask hands
objects out from, so they stay valid after a scheduler closes. Each is made on first use and closed at exit."""

import atexit
import os
import threading

_clients = {}
_lock = threading.Lock()


def shared_client(directory, start=False, capacity=None, **store_options):
    """This process's client of the store in ``directory``. With ``start`` the store is started when no daemon
    serves it (``depot.connect(dir, start=True, capacity=capacity, **store_options)``: ``spill_dir``,
    ``max_clients``, ``max_objects``)."""
    from .client import connect
    key = os.path.abspath(directory)
    with _lock:
        c = _clients.get(key)
        if c is None or c.closed:
            c = connect(key, start=True, capacity=capacity, **store_options) if start else connect(key)
            _clients[key] = c
        return c


@atexit.register
def _close_all():
    with _lock:
        for c in _clients.values():
            try:
                c.close()
            except Exception:
                pass
        _clients.clear()
