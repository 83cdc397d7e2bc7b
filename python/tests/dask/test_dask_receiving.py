"""depot.dask's receiving role (``_receiving``): a submit returns a ticket that ``get_async`` queues at once, and
that returns the next batch of its compute to end, received by the thread that asks; a submit wakes only another
thread that receives, only when a worker has room, once per burst. Tested on the role alone, without workers."""

import itertools
import os
import threading

import pytest

pytest.importorskip("dask")

from depot.dask._compute import Batch, Compute  # noqa: E402
from depot.dask._receiving import ReceiverRole, Ticket  # noqa: E402

_ids = itertools.count(1)


@pytest.fixture
def role():
    def receive_once(timeout):
        raise AssertionError("nothing to receive: every batch here has ended")
    role = ReceiverRole(threading.Lock(), receive_once, closing=lambda: False, finished=lambda: True)
    yield role
    role.stop(0)  # the collector was never started: this closes the wake-up pipe


def _batch(compute, key):
    return Batch(next(_ids), compute, [key], {}, [], b"", {})


def _wakes(role):
    """The wake-up bytes written so far (read out of the pipe)."""
    os.set_blocking(role.wake_fd, False)
    try:
        return len(os.read(role.wake_fd, 4096))
    except BlockingIOError:
        return 0


def test_a_ticket_goes_into_get_asyncs_queue_at_once_and_is_done_when_a_batch_of_its_compute_ended(role):
    compute = Compute(os.urandom(8), 1)
    ticket = Ticket(role, compute)
    queued = []
    ticket.add_done_callback(queued.append)
    assert queued == [ticket] and not ticket.done()
    role.end(_batch(compute, "a"), [("a", "result", False)])
    assert ticket.done()


def test_a_ticket_returns_the_next_batch_of_its_compute_to_end_whichever_it_is_and_raises_its_failure(role):
    compute = Compute(os.urandom(8), 1)
    a, b = _batch(compute, "a"), _batch(compute, "b")
    first, second = Ticket(role, compute), Ticket(role, compute)
    role.end(b, [("b", "result of b", False)])
    assert first.result() == [("b", "result of b", False)]  # b ended first: the first ticket returns it
    role.end(b, [("b", "again", False)])
    assert not compute.finished  # a batch ends once
    role.end(a, error=ValueError("worker gone"))
    with pytest.raises(ValueError, match="worker gone"):
        second.result()


def test_a_submit_wakes_only_another_receiving_thread_and_only_when_some_worker_has_room_once_per_burst(role):
    def submit(room=True):
        with role._lock:
            wake = role.submitted(lambda: room)
        if wake:
            role.wake()

    submit()
    # no thread receives: the next one to (get_async's own, asking for results) dispatches first
    assert _wakes(role) == 0
    role.receiver = -1  # another thread, in poll
    submit(room=False)
    # every worker full: the receiver sends it when a result frees a place (it dispatches after every result)
    assert _wakes(role) == 0
    submit()
    submit()
    assert _wakes(role) == 1  # one byte for the burst, until the receiver has drained the pipe
    os.write(role._wake_w, b"x")
    role.woken()  # what the receiver does when the pipe is readable
    submit()
    assert _wakes(role) == 1
    role.receiver = threading.get_ident()  # this thread receives: it dispatches before it polls again
    role._wake_pending = False
    submit()
    assert _wakes(role) == 0
