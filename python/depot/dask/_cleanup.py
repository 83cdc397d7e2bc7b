"""Releases and deletes off the scheduling loop (a delete is a daemon request): ``Discarder``'s thread releases
pins and deletes objects in the order asked; ``sweep`` deletes what is left under an id prefix."""

import queue
import threading

__all__ = ["Discarder"]


class Discarder:
    """A thread that releases pins and deletes the objects of ``client``; failures are ignored (the client or the
    daemon is gone: the sweep at close deletes what is left)."""

    def __init__(self, client):
        self._client = client
        self._items = queue.Queue()
        self._thread = threading.Thread(target=self._loop, name="depot-dask-discarder", daemon=True)
        self._thread.start()

    def discard(self, view, oid, owned):
        """Releases ``view`` (a pin, or None) and then, if ``owned``, deletes ``oid``, in the thread."""
        self._items.put((view, oid, owned))

    def drain(self):
        """Waits until every discard asked so far is done."""
        self._items.join()

    def delete(self, oid):
        """Deletes ``oid`` now, in this thread."""
        try:
            self._client.delete(oid)
        except Exception:
            pass

    def sweep(self, prefix):
        """Deletes every object whose id starts with ``prefix``, now."""
        try:
            infos = self._client.list()
        except Exception:
            return
        for info in infos:
            if bytes(info.id)[:len(prefix)] == prefix:
                self.delete(info.id)

    def close(self, timeout):
        """Stops the thread once the discards asked so far are done (``timeout`` seconds at most)."""
        self._items.put(None)
        self._thread.join(timeout)

    def _loop(self):
        while True:
            item = self._items.get()
            try:
                if item is None:
                    return
                view, oid, owned = item
                try:
                    if view is not None:
                        view.release()
                    if owned:
                        self._client.delete(oid)
                except Exception:
                    pass
            finally:
                self._items.task_done()
