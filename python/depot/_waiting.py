"""Waiting, with a deadline, for a condition that other processes announce by bumping a futex word.

Depot's one waiting protocol, as Java's ``dev.depot.core.sys.FutexWaiter`` (docs/DESIGN.md, "Waiting"): a get
waits on its id's seal word, a subscriber on its ring's wake sequence. Announcers make the condition true, bump
the 32-bit word, then read the waiter count and wake the word's sleepers only when it is positive.

The caller drives the loop and looks at its condition on every turn::

    with FutexWaiter(word, add_waiters, spin_ns, deadline_ns) as wait:
        while True:
            sequence = wait.sequence()        # 1. read the word before looking
            if condition():                   # 2. look
                return result
            if wait.pause(sequence) is EXPIRED:   # 3. spin, count, sleep
                return None

Each ``pause`` is one step of three phases: *spin* for the first ``spin_ns`` of the wait while the word still
equals the sequence (a change within microseconds is met awake, with no wake-up system call); *count*, once:
``add_waiters(1)`` and return, so that the caller looks again (Dekker with the announcer, who bumps the word
and then reads the count); *sleep* in ``FUTEX_WAIT`` while the word equals the sequence, until the deadline.
The kernel compares the word before sleeping, so a bump after the look is never slept through. Every return
of ``pause`` (a bump, a wake-up meant for another waiter of the word, a signal, a spurious wake-up) leads back
to the caller's look. The caller stays counted until ``close()``.
"""

import time

from . import _atomics as atomics

__all__ = ["COUNTED", "EXPIRED", "SLEPT", "SPUN", "FutexWaiter", "seconds_left"]

#: ``pause`` spun until the word moved or the spin time ended
SPUN = "spun"
#: ``pause`` counted the caller among the waiters: it must look before it sleeps
COUNTED = "counted"
#: ``pause`` slept in ``FUTEX_WAIT``, or found the word moved already
SLEPT = "slept"
#: the deadline has passed: ``pause`` did nothing
EXPIRED = "expired"


def seconds_left(deadline_ns):
    """Seconds until ``deadline_ns`` (``time.monotonic_ns()``), at least 0; None for None (no deadline)."""
    if deadline_ns is None:
        return None
    return max(0, deadline_ns - time.monotonic_ns()) / 1e9


class FutexWaiter:
    """One wait on the 32-bit futex word at ``address``, started now.

    Parameters
    ----------
    address : int
        Address of the futex word in a shared mapping.
    add_waiters : callable
        ``add_waiters(delta)`` adds +1 to the word's waiter count when the wait starts to count, -1 when it
        ends; sequentially consistent (a fetch-and-add or a volatile store).
    spin_ns : int
        How long the wait spins before it counts itself and sleeps (0: never).
    deadline_ns : int or None
        ``time.monotonic_ns()`` at which the wait ends; None: no deadline, 0: at once.
    """

    __slots__ = ("_address", "_add_waiters", "_spin_until", "deadline_ns", "_counted")

    def __init__(self, address, add_waiters, spin_ns, deadline_ns):
        self._address = address
        self._add_waiters = add_waiters
        self._spin_until = time.monotonic_ns() + spin_ns if spin_ns > 0 else 0
        #: ``time.monotonic_ns()`` at which the wait ends (None: never); callers may move it
        self.deadline_ns = deadline_ns
        self._counted = False

    def sequence(self):
        """The word now (acquire): read it before looking at the condition, and pass it to ``pause``."""
        return atomics.get_int_acquire(self._address)

    @property
    def counted(self):
        """Whether the caller is counted among the waiters: its next ``pause`` (before the deadline) sleeps."""
        return self._counted

    def expired(self):
        """Whether the deadline has passed."""
        return self.deadline_ns is not None and time.monotonic_ns() >= self.deadline_ns

    def pause(self, sequence, max_sleep=None):
        """One step of the wait: ``SPUN``, ``COUNTED``, ``SLEPT`` or ``EXPIRED`` (see the module comment). A
        sleep lasts at most ``max_sleep`` seconds (None: until the deadline), for callers that must look again
        now and then whatever the word does. ``sequence`` is the word as read before the caller's last look."""
        now = time.monotonic_ns()
        deadline = self.deadline_ns
        if deadline is not None and now >= deadline:
            return EXPIRED
        if not self._counted and now < self._spin_until:
            spin_end = self._spin_until if deadline is None else min(self._spin_until, deadline)
            address = self._address
            while atomics.get_int_acquire(address) == sequence and time.monotonic_ns() < spin_end:
                pass
            return SPUN
        if not self._counted:
            self._add_waiters(1)
            self._counted = True
            return COUNTED
        left = None if deadline is None else max(0, deadline - time.monotonic_ns()) / 1e9
        if max_sleep is not None:
            left = max_sleep if left is None else min(left, max_sleep)
        atomics.futex_wait(self._address, sequence, left)
        return SLEPT

    def close(self):
        """Ends the caller's count, if it was counted. Harmless twice."""
        if self._counted:
            self._counted = False
            self._add_waiters(-1)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
