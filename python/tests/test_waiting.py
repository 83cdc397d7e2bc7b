"""The waiting primitive (``depot._waiting.FutexWaiter``) against an announcer written the way Depot's are: make
the condition true, bump the word, read the waiter count, wake when it is positive. A word in an anonymous shared
mapping; the announcer is another thread or a forked process. No timing assertions: the deadlines of the joins
only keep a broken build from hanging."""

import ctypes
import mmap
import multiprocessing
import threading
import time

import pytest

from depot import _atomics as atomics
from depot._waiting import COUNTED, EXPIRED, SLEPT, SPUN, FutexWaiter, seconds_left

WORD, WAITERS, CONDITION, LOOKS = 0, 64, 128, 192
#: far beyond any wait a sound build has; only a lost wake-up reaches it
HANG = 20


class Shared:
    """A page shared with forked children: the futex word, its waiter count, the condition, the waiter's looks."""

    def __init__(self):
        self.mm = mmap.mmap(-1, mmap.PAGESIZE, flags=mmap.MAP_SHARED)
        self._anchor = ctypes.c_char.from_buffer(self.mm)
        self.base = ctypes.addressof(self._anchor)

    def close(self):
        del self._anchor
        self.mm.close()

    def waiter(self, spin_ns=0, deadline_ns=None):
        return FutexWaiter(self.base + WORD, lambda d: atomics.get_and_add_int(self.base + WAITERS, d), spin_ns,
                           deadline_ns)

    def waiters(self):
        return atomics.get_int_volatile(self.base + WAITERS)

    def looks(self):
        return atomics.get_int_volatile(self.base + LOOKS)

    def await_condition(self, wait, pauses=None):
        """The caller's loop: True once the condition holds, False at the deadline."""
        while True:
            sequence = wait.sequence()
            atomics.get_and_add_int(self.base + LOOKS, 1)
            if atomics.get_int_volatile(self.base + CONDITION):
                return True
            pause = wait.pause(sequence)
            if pauses is not None:
                pauses.append(pause)
            if pause is EXPIRED:
                return False

    def announce(self, condition=True):
        if condition:
            atomics.put_int_volatile(self.base + CONDITION, 1)
        atomics.get_and_add_int(self.base + WORD, 1)
        if atomics.get_int_volatile(self.base + WAITERS) > 0:
            atomics.futex_wake_all(self.base + WORD)


@pytest.fixture
def shared():
    s = Shared()
    try:
        yield s
    finally:
        s.close()


def _spin_until(condition, what):
    deadline = time.monotonic() + HANG
    while not condition():
        assert time.monotonic() < deadline, what + " did not happen within %d s" % HANG
        time.sleep(0)


def test_a_deadline_that_passes_without_an_announcement_ends_the_wait(shared):
    pauses = []
    with shared.waiter(0, time.monotonic_ns() + 20_000_000) as wait:
        assert not shared.await_condition(wait, pauses)
        assert wait.expired()
    assert pauses[-1] is EXPIRED
    assert shared.waiters() == 0, "the count ends with the wait"


def test_a_deadline_of_zero_looks_once_and_does_not_wait(shared):
    pauses = []
    with shared.waiter(1_000_000, 0) as wait:
        assert not shared.await_condition(wait, pauses)
    assert pauses == [EXPIRED]
    assert shared.looks() == 1


def test_the_waiter_counts_itself_and_looks_again_before_it_sleeps(shared):
    with shared.waiter() as wait:
        assert not wait.counted
        assert wait.pause(wait.sequence()) is COUNTED
        assert wait.counted and shared.waiters() == 1
        assert wait.pause(wait.sequence(), max_sleep=0.001) is SLEPT
        assert shared.waiters() == 1, "counted until the wait ends"
    assert shared.waiters() == 0


def test_the_waiter_spins_uncounted_before_it_counts_itself(shared):
    with shared.waiter(spin_ns=10 * 10**9) as wait:
        # The word moved on since this sequence: the spin ends at once, and the caller looks again.
        assert wait.pause(wait.sequence() - 1) is SPUN
        assert shared.waiters() == 0
    pauses = []
    with shared.waiter(spin_ns=1_000_000) as wait:
        while not pauses or pauses[-1] is SPUN:
            pauses.append(wait.pause(wait.sequence()))
    assert pauses[-1] is COUNTED, pauses
    assert shared.waiters() == 0


def test_an_announcement_between_the_look_and_the_sleep_is_not_slept_through(shared):
    with shared.waiter() as wait:
        assert wait.pause(wait.sequence()) is COUNTED
        sequence = wait.sequence()
        shared.announce()
        # The word moved on since the sequence was read: the sleep returns at once instead of lasting forever.
        assert wait.pause(sequence) is SLEPT


def test_another_thread_wakes_the_waiter(shared):
    result = []

    def wait_for_it():
        with shared.waiter() as wait:
            result.append(shared.await_condition(wait))

    t = threading.Thread(target=wait_for_it, daemon=True)
    t.start()
    _spin_until(lambda: shared.waiters() > 0, "the waiter counting itself")
    shared.announce()
    t.join(HANG)
    assert result == [True]
    assert shared.waiters() == 0


def _wait_in_child(shared):
    with shared.waiter() as wait:
        raise SystemExit(0 if shared.await_condition(wait) else 1)


def test_another_process_wakes_the_waiter(shared):
    child = multiprocessing.get_context("fork").Process(target=_wait_in_child, args=(shared,))
    child.start()
    try:
        _spin_until(lambda: shared.waiters() > 0, "the child counting itself")
        shared.announce()
        child.join(HANG)
        assert child.exitcode == 0
    finally:
        if child.is_alive():
            child.kill()
        child.join()
    assert shared.waiters() == 0


def test_a_wake_up_without_the_condition_makes_the_waiter_look_again(shared):
    result = []

    def wait_for_it():
        with shared.waiter() as wait:
            result.append(shared.await_condition(wait))

    t = threading.Thread(target=wait_for_it, daemon=True)
    t.start()
    _spin_until(lambda: shared.waiters() > 0, "the waiter counting itself")
    before = shared.looks()
    shared.announce(condition=False)  # a wake-up meant for another waiter of the word, or a spurious one
    _spin_until(lambda: shared.looks() > before, "the waiter looking again")
    assert t.is_alive() and not result, "a wake-up without the condition does not end the wait"
    shared.announce()
    t.join(HANG)
    assert result == [True]


def test_seconds_left():
    assert seconds_left(None) is None
    assert seconds_left(time.monotonic_ns() - 1) == 0
    assert 0 < seconds_left(time.monotonic_ns() + 10**9) <= 1
