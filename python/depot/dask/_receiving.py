"""Who receives the workers' answers: while a compute runs, the thread that runs it (``get_async``'s, through the
``Ticket`` each submit returns); between computes, a collector thread, which also notices deaths. Several
threads computing on one pool at once take turns: one receives for all of them, the others wait for their batches
or for the turn."""

import concurrent.futures
import os
import threading
import time

__all__ = ["Ticket", "ReceiverRole"]


class Ticket:
    """What ``Pool.submit`` returns to ``dask.local.get_async`` for a batch, in place of a future.

    ``get_async`` (both supported versions) hands each submitted future's ``add_done_callback`` its queue's
    ``put``, takes one item out of that queue per batch and iterates over ``item.result()``: the keys, results
    and failures of a batch, each naming its key. A ticket goes into the queue at once, and its ``result()``
    returns the results of the next batch of its compute to end, whichever that is, receiving them from the
    workers in the calling thread (``ReceiverRole.next_finished``). One ticket per batch, so every batch's
    results are returned once, as they end; and no other thread stands between a worker's answer and
    ``get_async``: with a collector thread completing futures, each result crossed two threads (a wake-up and a
    GIL hand-over each, on the cores the workers compute on) before ``get_async`` saw it."""

    __slots__ = ("_role", "_compute")

    def __init__(self, role, compute):
        self._role = role
        self._compute = compute

    def add_done_callback(self, fn):
        fn(self)

    def result(self, timeout=None):
        return self._role.next_finished(self._compute, timeout)

    def done(self):
        return bool(self._compute.finished)


class ReceiverRole:
    """The receiving role, held by one thread at a time (``receiver``), under the pool's ``lock``, and the pipe
    that wakes the thread holding it (``wake_fd`` is in its poll set).

    ``receive_once(timeout)`` receives from the workers once (the pool's); ``closing()`` tells whether the pool
    closes, ``finished()`` whether the collector may stop (closing, and no worker alive)."""

    def __init__(self, lock, receive_once, closing, finished):
        self._lock = lock
        self._receive_once = receive_once
        self._closing = closing
        self._finished = finished
        self.wake_fd, self._wake_w = os.pipe()
        #: set by the thread that writes a wake-up byte, cleared by the receiver after it drained the pipe (under
        #: the lock): while set, later submits rely on that byte
        self._wake_pending = False
        #: the thread receiving from the workers now, or None: while a compute runs, one of the threads running
        #: computes, else the collector
        self.receiver = None
        self.computes_running = 0
        #: compute threads wait here for their batches to end or for the role to be free
        self._turn = threading.Condition(lock)
        #: the collector waits here for no compute to run
        self._quiet = threading.Condition(lock)
        self._collector = threading.Thread(target=self._collect, name="depot-dask-collector", daemon=True)

    def start(self):
        self._collector.start()

    def wake(self):
        try:
            os.write(self._wake_w, b"x")
        except OSError:
            pass

    def woken(self):
        """The receiver found the wake-up pipe readable: it empties it, then sends what was queued."""
        # drained first, then cleared: a submit that found the flag set between the two has its batch queued
        # already (the receiver dispatches next), one after the clear writes again. Cleared first, a submit
        # between the clear and the read left the flag set with its byte read, and every later submit waited
        # for a wake-up that never came (a compute hung)
        os.read(self.wake_fd, 4096)
        with self._lock:
            self._wake_pending = False

    def submitted(self, room):
        """A batch was queued (under the lock); ``room``: some worker has room for it. True if the caller must
        ``wake`` the receiver: only another thread that receives now (a concurrent compute's), once for all the
        batches submitted before it gets to them, and only when some worker has room (a place frees only in the
        receiving thread, which dispatches right after). Otherwise the next thread to receive sends it (it
        dispatches first): ``get_async``'s own when it asks for results, after it has submitted all it can, so
        that placement sees them all."""
        if self.receiver is None or self.receiver == threading.get_ident() or self._wake_pending or not room():
            return False
        self._wake_pending = True
        return True

    def end(self, batch, body=None, error=None):
        """Hands ``batch``'s results, or its failure, to its compute's tickets (once)."""
        with self._lock:
            if batch.ended:
                return
            batch.ended = True
            batch.compute.finished.append((body, error))
            self._turn.notify_all()

    def compute_started(self):
        """A compute's thread will receive: True when the collector receives now (in poll: wake it, it gives the
        role up)."""
        with self._lock:
            self.computes_running += 1
            return self.receiver is not None

    def compute_ended(self):
        """A compute's thread no longer receives: the collector does again once no compute runs."""
        with self._lock:
            self.computes_running -= 1
            if not self.computes_running:
                self._quiet.notify()

    def next_finished(self, compute, timeout=None):
        """The results of the next batch of ``compute`` to end (its ``Ticket``'s ``result()``), received in this
        thread unless another one receives now; raises the batch's failure."""
        deadline = None if timeout is None else time.monotonic() + timeout
        ended = self.receive_until(lambda: compute.finished.popleft() if compute.finished else None, deadline)
        if ended is None:
            raise concurrent.futures.TimeoutError("no batch of the compute ended within %s s" % timeout)
        body, error = ended
        if error is not None:
            raise error
        return body

    def receive_until(self, ready, deadline=None):
        """Receives from the workers in this thread, or waits while another thread does, until ``ready()`` (called
        under the lock) returns something other than None, which is returned; None at ``deadline``."""
        me = threading.get_ident()
        while True:
            with self._lock:
                got = ready()
                if got is not None:
                    return got
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return None
                if self.receiver is not None:
                    self._turn.wait(remaining)
                    continue
                self.receiver = me
            try:
                self._receive_once(remaining)
            finally:
                self._give_up()

    def _give_up(self):
        with self._lock:
            self.receiver = None
            self._turn.notify_all()
            if not self.computes_running or self._closing():
                self._quiet.notify()

    def _collect(self):
        """The collector thread: receives while no compute runs (a worker's start, a death, the late results of
        an abandoned compute)."""
        me = threading.get_ident()
        while True:
            with self._lock:
                while self.receiver is not None or (self.computes_running and not self._closing()):
                    self._quiet.wait()
                if self._finished():
                    return
                self.receiver = me
            try:
                self._receive_once(None)
            finally:
                self._give_up()

    def stop(self, timeout):
        """Lets the collector see the pool closing and waits for it (``timeout`` seconds at most), then closes the
        wake-up pipe."""
        with self._lock:
            self._quiet.notify()
        self.wake()
        if self._collector.is_alive() and threading.current_thread() is not self._collector:
            self._collector.join(timeout)
        for fd in (self.wake_fd, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass
