"""The store-wide allocator lock, taken by Python as Java's ``dev.depot.core.store.AllocationLock`` takes it.

The 64-bit lock word at ``ALLOC_LOCK_OFFSET`` holds ``holder client slot + 1`` (0: free; ``NEEDS_REBUILD``: free,
but the heap must be rebuilt first). Taking it is a CAS from 0 to our slot + 1 (acquire: the previous holder's
release publishes its changes to us); releasing is a CAS back to 0 (release: publishes ours), then, Dekker with
a sleeper who counts itself in ``LOCK_WAITERS`` before sleeping while the word names the holder, a
``FUTEX_WAKE`` when the count is positive.

What Python does not do is repair: it never steals the lock from a dead holder and never rebuilds the heap.
``try_acquire`` gives up instead (the caller then asks the daemon, which waits, steals and rebuilds as Java
does); ``acquire`` waits, since the daemon's reaper takes the lock of a dead holder within its reap interval
and rebuilds. A Python process killed while it holds the lock leaves the word naming its dead slot, which is
exactly what Java's recovery expects.

All threads of a process take the lock as one client slot, so a process-local lock orders them first.
"""

import os
import threading
import time

from . import _atomics as atomics
from ._layout import AllocationLock as AL
from ._layout import StoreHeaderDescriptor as H
from .errors import StoreBusyError

# Spins of try_acquire while another process holds the lock: a Java critical section takes ~1 µs, so a holder
# that is running lets go within them; one that was preempted does not, and the daemon can wait for it better.
_TRY_SPINS = 64
# How long acquire sleeps at most before looking again (as Java's liveness check interval).
_SLEEP_SECONDS = 0.002
# How long acquire waits for a live holder (as Java's depot.lock.waitLimitMillis default).
WAIT_LIMIT_SECONDS = 5.0


class AllocationLock:
    """The lock of one mapping, taken as client slot ``client``."""

    def __init__(self, mapping, client):
        self._word = mapping.base + H.ALLOC_LOCK_OFFSET
        self._waiters = mapping.base + H.LOCK_WAITERS_OFFSET
        self._mine = client + 1
        self._local = threading.Lock()
        #: the thread holding the lock (``threading.get_ident``), or None: a finaliser that runs in it while it
        #: holds the lock (a garbage collection inside a create) must not wait for the lock
        self._holder_thread = None

    def try_acquire(self, wait_local=True):
        """Takes the lock unless another process holds it past a short spin, or it waits for a rebuild: True
        when taken (then ``release`` it). Without ``wait_local`` it also gives up when another thread of this
        process holds it, or this one does (a finaliser may run while its thread holds the lock)."""
        if self.held_by_this_thread() or not self._local.acquire(wait_local):
            return False
        mine = self._mine
        word = self._word
        for _ in range(_TRY_SPINS):
            holder = atomics.get_long_volatile(word)
            if holder == 0 and atomics.compare_and_set_long(word, 0, mine):
                self._holder_thread = threading.get_ident()
                return True
            if holder == mine:
                self._local.release()
                raise RuntimeError("allocator lock is already held by this client (%d): not reentrant" % (mine - 1))
            if holder == AL.NEEDS_REBUILD:
                break
        self._local.release()
        return False

    def acquire(self, limit_seconds=WAIT_LIMIT_SECONDS):
        """Takes the lock, sleeping on its word while another process holds it, up to ``limit_seconds``; raises
        StoreBusyError naming the holder then."""
        if self.held_by_this_thread():
            raise RuntimeError("allocator lock is already held by this thread (client %d): not reentrant"
                               % (self._mine - 1))
        self._local.acquire()
        mine = self._mine
        word = self._word
        deadline = time.monotonic() + limit_seconds
        spins = 0
        while True:
            holder = atomics.get_long_volatile(word)
            if holder == 0:
                if atomics.compare_and_set_long(word, 0, mine):
                    self._holder_thread = threading.get_ident()
                    return
                continue
            if holder == mine:
                self._local.release()
                raise RuntimeError("allocator lock is already held by this client (%d): not reentrant" % (mine - 1))
            spins += 1
            if spins < _TRY_SPINS:
                continue
            left = deadline - time.monotonic()
            if left <= 0:
                self._local.release()
                raise StoreBusyError("the store's allocator lock was held by client %d for %.1f s (a process stopped "
                                     "with SIGSTOP, or waiting for a rebuild that only a daemon or Java client does);"
                                     " continue or kill that process" % (holder - 1, limit_seconds))
            atomics.get_and_add_int(self._waiters, 1)
            try:
                # The kernel compares the word's low 32 bits with the holder we saw before sleeping.
                atomics.futex_wait(word, holder & 0xFFFFFFFF, min(left, _SLEEP_SECONDS))
            finally:
                atomics.get_and_add_int(self._waiters, -1)

    def held_by_this_thread(self):
        """Whether the calling thread holds the lock (it is not reentrant)."""
        return self._holder_thread == threading.get_ident()

    def release(self):
        """Releases the lock (a CAS: publishes everything done under it) and wakes one sleeper, if any."""
        self._holder_thread = None
        try:
            if not atomics.compare_and_set_long(self._word, self._mine, 0):
                raise RuntimeError("allocator lock released by client %d but held by %d (pid %d)"
                                   % (self._mine - 1, atomics.get_long_volatile(self._word) - 1, os.getpid()))
            if atomics.get_int_volatile(self._waiters) > 0:
                atomics.futex_wake(self._word, 1)
        finally:
            self._local.release()
