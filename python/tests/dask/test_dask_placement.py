"""depot.dask's placement (``Pool._choose``): a worker with room takes the queued batch of its own family, or of
none, before one that another worker's inputs or family wait for; and it never idles while a batch waits.

The pool here has no processes: workers are stand-ins with a pid and the batches in flight, as ``_choose`` sees
them."""

import collections
import itertools
import os

import pytest

pytest.importorskip("dask")

from depot.dask._pool import Compute, Pool, _Batch  # noqa: E402
from depot.dask._refs import Held  # noqa: E402
from depot.dask._transport import Drop, Results, RunBatch, Unqueue, encode  # noqa: E402
from dask_fixtures import clean_store, dask_daemon, scheduler  # noqa: E402,F401


class _StandIn:
    def __init__(self, pid):
        self.pid = pid
        self.alive = True
        self.inflight = {}


def _pool(workers=2, depth=2):
    pool = Pool.__new__(Pool)
    pool.token = os.urandom(8)
    pool.depth = depth
    pool.workers = [_StandIn(100 + i) for i in range(workers)]
    pool._pending = collections.deque()
    return pool


def _tree(leaves):
    """Dependents of a pairwise reduction of ``leaves`` leaves, in Dask's depth-first order of the leaves."""
    dependents = {}
    level = ["leaf-%d" % i for i in range(leaves)]
    depth = 0
    while len(level) > 1:
        depth += 1
        up = ["combine-%d-%d" % (depth, i) for i in range(len(level) // 2)]
        for i, key in enumerate(level):
            dependents[key] = {up[i // 2]}
        level = up
    dependents[level[0]] = set()
    return dependents


_ids = itertools.count(1)


def _queue(pool, compute, keys, held=()):
    for key in keys:
        pool._pending.append(_Batch(next(_ids), compute, [key], {}, list(held), b"", ()))


def _place_next(pool):
    """What ``_dispatch`` does with ``_choose``'s answer, without sending anything: (worker's pid, key)."""
    w, batch = pool._choose()
    w.inflight[batch.id] = batch
    batch.compute.placed(batch.keys[0], w.pid)
    return w.pid, batch.keys[0]


def _finish(pool, pid, key):
    for w in pool.workers:
        if w.pid == pid:
            for batch_id, batch in list(w.inflight.items()):
                if batch.keys[0] == key:
                    del w.inflight[batch_id]


def _split_tree(leaves):
    """A pool of two stand-in workers and a compute of a tree of ``leaves`` leaves, split into two shares; returns
    them and ``get_async``'s reordered ready list."""
    pool = _pool()
    compute = Compute(pool, 1)
    compute.dependents = _tree(leaves)
    ready = _popped(["leaf-%d" % i for i in range(leaves)])
    compute.split_roots(ready, 2, 1)
    return pool, compute, ready


def _by_worker(placed):
    out = collections.defaultdict(set)
    for pid, key in placed:
        out[pid].add(key)
    return out


def test_the_first_leaves_of_a_tree_go_to_one_worker_per_grandparent():
    pool = _pool()
    compute = Compute(pool, 1)
    compute.dependents = _tree(16)
    # get_async has submitted the first workers x depth x 2 leaves before the collector thread dispatches
    _queue(pool, compute, ["leaf-%d" % i for i in range(8)])
    placed = [_place_next(pool) for _ in range(4)]
    by_worker = _by_worker(placed)
    # each worker has two siblings of one grandparent: leaves 0-3 (combine-2-0) and 4-7 (combine-2-1)
    assert sorted(sorted(keys) for keys in by_worker.values()) == [["leaf-0", "leaf-1"], ["leaf-4", "leaf-5"]]
    assert pool._choose() is None  # both workers are full (depth 2)
    # a worker that finishes takes the next leaf of its own grandparent's family
    pid_of_0 = next(pid for pid, key in placed if key == "leaf-0")
    _finish(pool, pid_of_0, "leaf-0")
    assert _place_next(pool) == (pid_of_0, "leaf-2")


def _popped(ready):
    """The order in which ``get_async`` takes the tasks of ``ready`` (it pops from the end)."""
    return ready[::-1]


def test_the_tasks_ready_at_the_start_are_split_into_one_contiguous_share_per_worker():
    compute = Compute(_pool(), 1)
    ready = _popped(["leaf-%d" % i for i in range(8)])
    compute.split_roots(ready, 2, 1)
    assert _popped(ready) == ["leaf-0", "leaf-4", "leaf-1", "leaf-5", "leaf-2", "leaf-6", "leaf-3", "leaf-7"]
    assert compute.roots == {"leaf-%d" % i: i // 4 for i in range(8)}


def test_shares_are_submitted_side_by_side_a_chunk_at_a_time_and_may_differ_by_one():
    compute = Compute(_pool(), 1)
    ready = _popped(["leaf-%d" % i for i in range(8)])
    compute.split_roots(ready, 2, 2)
    assert _popped(ready) == ["leaf-0", "leaf-1", "leaf-4", "leaf-5", "leaf-2", "leaf-3", "leaf-6", "leaf-7"]
    compute = Compute(_pool(workers=3), 2)
    ready = _popped(["t%d" % i for i in range(5)])
    compute.split_roots(ready, 3, 1)
    assert _popped(ready) == ["t0", "t1", "t3", "t2", "t4"]
    assert [compute.roots["t%d" % i] for i in range(5)] == [0, 1, 1, 2, 2]


def test_nothing_is_split_for_one_worker_or_one_task():
    compute = Compute(_pool(), 1)
    for ready, workers in ((["b", "a"], 1), (["a"], 2), ([], 2)):
        before = list(ready)
        compute.split_roots(ready, workers, 1)
        assert ready == before
    assert compute.roots == {}


def test_each_worker_runs_the_leaves_of_its_own_share():
    pool, compute, ready = _split_tree(16)
    # get_async submits the first workers x depth x 2 in its (reordered) order
    _queue(pool, compute, _popped(ready)[:8])
    by_worker = _by_worker([_place_next(pool) for _ in range(4)])
    assert by_worker == {pool.workers[0].pid: {"leaf-0", "leaf-1"}, pool.workers[1].pid: {"leaf-8", "leaf-9"}}
    # with its own share done, a worker takes what waits rather than idle
    pool._pending = collections.deque(b for b in pool._pending if compute.roots[b.keys[0]] == 1)
    for key in ("leaf-0", "leaf-1"):
        _finish(pool, pool.workers[0].pid, key)
    assert _place_next(pool)[0] == pool.workers[0].pid


def test_a_worker_out_of_its_share_takes_a_family_nobody_started_and_keeps_it():
    pool, compute, _ = _split_tree(16)
    fast, slow = pool.workers
    slow.inflight = {98: object()}
    compute.placed("leaf-8", slow.pid)  # the slow worker has started the family of leaves 8-11
    # the fast worker has run its whole share; what is queued is the slow worker's
    _queue(pool, compute, ["leaf-9", "leaf-12"])
    # leaf-9's sibling is on the slow worker: taking it would move a result; leaf-12's family is nobody's yet
    assert _place_next(pool) == (fast.pid, "leaf-12")
    _finish(pool, fast.pid, "leaf-12")
    # leaf-12's family is the fast worker's now: its siblings follow it there, not to their share's worker
    _queue(pool, compute, ["leaf-13"])
    slow.inflight = {}
    assert _place_next(pool) == (fast.pid, "leaf-13")


def test_a_share_whose_worker_died_prefers_no_worker_of_its_own():
    pool = _pool()
    compute = Compute(pool, 1)
    compute.roots = {"leaf-0": 1}
    pool.workers[1].alive = False
    _queue(pool, compute, ["leaf-0"])
    assert _place_next(pool) == (pool.workers[0].pid, "leaf-0")


def test_a_worker_with_room_takes_a_batch_another_worker_would_rather_run_and_does_not_idle():
    pool = _pool()
    compute = Compute(pool, 1)
    compute.dependents = _tree(2)
    _queue(pool, compute, ["leaf-0", "leaf-1"])
    first = _place_next(pool)
    second = _place_next(pool)
    # leaf-1's family is the first worker's, but the second has nothing to do: the two run at once
    assert first[1] == "leaf-0" and second[1] == "leaf-1" and first[0] != second[0]


def test_a_batch_goes_to_the_worker_holding_its_inputs_when_that_one_has_room():
    pool = _pool()
    compute = Compute(pool, 1)
    compute.dependents = {"combine": set(), "other": set()}
    holder = pool.workers[1].pid
    pool.workers[1].inflight[0] = object()  # busier than worker 0, still with room
    _queue(pool, compute, ["combine"], held=[Held(os.urandom(20), 8 << 20, holder)])
    _queue(pool, compute, ["other"])
    # worker 0 chooses first (fewest in flight) and leaves the combine to the worker that holds its input
    assert _place_next(pool) == (pool.workers[0].pid, "other")
    assert _place_next(pool) == (holder, "combine")


def test_without_the_graph_batches_go_in_order_to_the_least_busy_worker():
    pool = _pool(workers=3, depth=1)
    compute = Compute(pool, 1)  # its start-state callback never ran: no dependents
    _queue(pool, compute, ["a", "b", "c", "d"])
    assert [_place_next(pool) for _ in range(3)] == [(100, "a"), (101, "b"), (102, "c")]
    assert pool._choose() is None
    assert list(b.keys[0] for b in pool._pending) == ["d"]


def test_a_batch_whose_worker_is_full_waits_unless_another_worker_is_idle():
    pool = _pool()
    compute = Compute(pool, 1)
    compute.dependents = {"combine": set()}
    busy, other = pool.workers
    busy.inflight = {1: object(), 2: object()}
    other.inflight = {3: object()}
    _queue(pool, compute, ["combine"], held=[Held(os.urandom(20), 8 << 20, busy.pid)])
    assert pool._choose() is None  # the other worker still has a task to run
    other.inflight = {}
    assert _place_next(pool) == (other.pid, "combine")  # idle: it takes it and the input moves


def _one_busy_one_idle():
    """A pool whose first worker runs a batch and has a second one queued; the other is idle."""
    pool = _pool()
    compute = Compute(pool, 1)
    busy, idle = pool.workers
    running, waiting = (_Batch(next(_ids), compute, [k], {}, [], b"", ()) for k in ("running", "waiting"))
    busy.inflight = {running.id: running, waiting.id: waiting}
    return pool, compute, waiting


def test_an_idle_worker_takes_back_the_batch_waiting_behind_another_workers_running_one():
    pool, compute, waiting = _one_busy_one_idle()
    busy, idle = pool.workers
    assert pool._take_back_for_idle() == (busy, Unqueue(waiting.id))
    assert pool._take_back_for_idle() is None  # asked once
    idle.inflight = {99: object()}
    waiting.taking_back = False
    assert pool._take_back_for_idle() is None  # nobody is idle


def test_an_idle_worker_takes_nothing_back_while_get_async_has_tasks_ready_to_submit():
    pool, compute, waiting = _one_busy_one_idle()
    busy = pool.workers[0]
    compute.unsubmitted = ["leaf-9"]  # get_async submits it once it has taken in the result that idled a worker
    assert pool._take_back_for_idle() is None
    compute.unsubmitted.pop()
    assert pool._take_back_for_idle() == (busy, Unqueue(waiting.id))


def _sleep_then_time(seconds):
    import time
    time.sleep(seconds)
    return time.monotonic()


def test_no_task_waits_behind_a_long_one_while_a_worker_idles(scheduler, clean_store):
    import dask
    # whichever worker gets the long task, and whatever Dask's order, the other two end long before it
    long_end, *others = dask.compute(dask.delayed(_sleep_then_time)(1.5), dask.delayed(_sleep_then_time)(0.05),
                                     dask.delayed(_sleep_then_time)(0.0), scheduler=scheduler)
    for end in others:
        assert end < long_end - 1.0


def test_with_every_worker_idle_a_chain_stays_on_the_worker_holding_its_input():
    pool = _pool()
    compute = Compute(pool, 1)
    compute.dependents = {"step-2": set()}
    holder = pool.workers[1].pid  # not the first worker, which wins ties
    _queue(pool, compute, ["step-2"], held=[Held(os.urandom(20), 8 << 20, holder)])
    assert _place_next(pool) == (holder, "step-2")


def _header(batch_id):
    return RunBatch(batch_id, {}, [], b"", [], None)


def test_a_batch_given_back_is_skipped_by_the_worker_and_a_second_request_finds_nothing():
    from depot.dask._worker import _BatchQueue
    q = _BatchQueue()
    q.put((b"m1", _header(1), False))
    q.put((b"m2", _header(2), False))
    assert q.unqueue(2)
    assert not q.unqueue(2)  # already given back: the pool must not send it elsewhere a second time
    assert q.get() == (b"m1", _header(1), False)
    assert q.get() == (b"m2", _header(2), True)
    assert not q.unqueue(1)  # started (taken off the queue): it runs here


def test_a_batch_that_came_back_is_given_back_again_only_from_its_new_copy():
    from depot.dask._worker import _BatchQueue
    q = _BatchQueue()
    q.put((b"first", _header(7), False))
    assert q.unqueue(7)
    q.put((b"again", _header(7), False))  # the pool sent it to this worker again
    assert q.unqueue(7)
    assert [q.get(), q.get()] == [(b"first", _header(7), True), (b"again", _header(7), True)]
    q.put((b"third", _header(7), False))
    q.put((b"fourth", _header(8), False))
    assert q.get()[0] == b"third"  # started: a request now finds no copy to give back
    assert not q.unqueue(7)



def test_results_of_a_batch_no_longer_in_flight_are_forgotten_by_their_worker():
    import threading
    from depot.dask._refs import Inline
    pool = _pool()
    pool._lock = threading.Lock()
    sent = []
    pool._send = lambda w, message: sent.append((w.pid, message))
    w = pool.workers[0]
    mine, elsewhere = os.urandom(20), os.urandom(20)
    body = [("a", (Held(mine, 1 << 20, w.pid), w.pid), False),
            ("b", (Held(elsewhere, 1 << 20, 999), w.pid), False),
            ("c", (Inline(b"", []), w.pid), False),
            ("d", (ValueError("x"), "traceback"), True)]
    pool._received(w, encode(Results(42, body, {})))  # batch 42 is not in flight on w (given back, run elsewhere)
    assert sent == [(w.pid, Drop([mine]))]


def test_the_fixtures_name_the_process_pinning_an_object(dask_daemon):
    import depot
    from depot.ids import ObjectId
    from dask_fixtures import pinners
    with depot.connect(dask_daemon.dir) as c:
        oid = ObjectId(os.urandom(20))
        c.put(oid, b"x" * 10000)
        view = c.get(oid, timeout=0)
        try:
            assert pinners(dask_daemon.dir).get(bytes(oid)) == [os.getpid()]
        finally:
            view.release()
            c.delete(oid)
        assert bytes(oid) not in pinners(dask_daemon.dir)


def _submitting_pool(workers=2, depth=2):
    """A stand-in pool whose ``submit`` runs for real and whose wake-ups of the receiving thread are counted."""
    import threading
    pool = _pool(workers, depth)
    pool._lock = threading.Lock()
    pool._closing = False
    pool._wake_pending = False
    pool._receiver = None
    pool._batches = itertools.count(1)
    pool.wakes = 0

    def wake():
        pool.wakes += 1
    pool._wake = wake
    return pool


def _fill(w, depth):
    for _ in range(depth - len(w.inflight)):
        w.inflight[next(_ids)] = None


def test_a_submit_returns_a_ticket_that_get_async_queues_at_once():
    pool = _submitting_pool()
    compute = Compute(pool, 1)
    ticket = pool.submit(compute, len, [("a", ())])
    queued = []
    ticket.add_done_callback(queued.append)
    assert queued == [ticket] and not ticket.done()
    compute.finished.append(([("a", "result", False)], None))
    assert ticket.done()


def test_a_ticket_returns_the_next_batch_of_its_compute_to_end_whichever_it_is_and_raises_its_failure():
    import threading
    pool = _submitting_pool()
    pool._turn = threading.Condition(pool._lock)
    compute = Compute(pool, 1)
    first, second = pool.submit(compute, len, [("a", ())]), pool.submit(compute, len, [("b", ())])
    pool._end(pool._pending[1], [("b", "result of b", False)])
    assert first.result() == [("b", "result of b", False)]  # b ended first: the first ticket returns it
    pool._end(pool._pending[1], [("b", "again", False)])
    assert not compute.finished  # a batch ends once
    pool._end(pool._pending[0], error=ValueError("worker gone"))
    with pytest.raises(ValueError, match="worker gone"):
        second.result()


def test_a_submit_wakes_only_another_receiving_thread_and_only_when_some_worker_has_room_once_per_burst():
    pool = _submitting_pool()
    compute = Compute(pool, 1)
    pool.submit(compute, len, [("nobody-receives", ())])
    # no thread receives: the next one to (get_async's own, asking for results) dispatches first
    assert pool.wakes == 0
    pool._receiver = -1  # another thread, in poll
    for w in pool.workers:
        _fill(w, pool.depth)
    pool.submit(compute, len, [("full-1", ())])
    # every worker full: the receiver sends it when a result frees a place (it dispatches after every result)
    assert pool.wakes == 0
    pool.workers[1].inflight.popitem()
    pool.submit(compute, len, [("room-1", ())])
    pool.submit(compute, len, [("room-2", ())])
    assert pool.wakes == 1  # one byte for the burst, until the receiver has drained the pipe
    pool._wake_pending = False  # what the receiver does after draining it
    pool.submit(compute, len, [("room-3", ())])
    assert pool.wakes == 2
    import threading
    pool._receiver = threading.get_ident()  # this thread receives: it dispatches before it polls again
    pool._wake_pending = False
    pool.submit(compute, len, [("mine", ())])
    assert pool.wakes == 2
    assert len(pool._pending) == 6


def test_the_collectors_poll_set_reports_pipes_pidfds_and_the_wake_pipe_and_follows_the_workers():
    import multiprocessing.connection
    import socket
    import subprocess
    import sys
    from depot.dask._pool import _Poller
    wake_r, wake_w = os.pipe()
    pairs = [socket.socketpair() for _ in range(2)]
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        workers = []
        for i, (ours, _) in enumerate(pairs):
            w = _StandIn(200 + i)
            w.conn = multiprocessing.connection.Connection(os.dup(ours.fileno()))
            w.sentinel = None
            workers.append(w)
        workers[1].sentinel = os.pidfd_open(child.pid)
        poller = _Poller(wake_r)
        pairs[0][1].sendall(b"\0\0\0\1x")
        assert poller.wait(workers) == [(workers[0], _Poller.CONN)]
        assert workers[0].conn.recv_bytes() == b"x"
        child.wait()
        assert poller.wait(workers) == [(workers[1], _Poller.SENTINEL)]
        os.write(wake_w, b"x")
        assert poller.wait(workers[:1]) == [(None, None)]  # the dead worker is no longer polled
    finally:
        child.wait()
        for w in workers:
            w.conn.close()
        if workers[1].sentinel is not None:
            os.close(workers[1].sentinel)
        for a, b in pairs:
            a.close()
            b.close()
        os.close(wake_r)
        os.close(wake_w)


def test_an_input_in_depot_no_longer_ties_a_batch_to_its_holder():
    pool = _pool()
    compute = Compute(pool, 1)
    a, b = pool.workers
    old, fresh = Held(os.urandom(20), 8 << 20, a.pid), Held(os.urandom(20), 8 << 20, b.pid)
    _queue(pool, compute, ["combine"], held=[old, fresh])
    batch = pool._pending[0]
    assert pool._preferred(batch) == a.pid  # equal bytes: the first holder
    compute.published.add(bytes(old.oid))
    assert pool._preferred(batch) == b.pid  # the input not in Depot decides
    compute.published.add(bytes(fresh.oid))
    assert pool._preferred(batch) is None  # all in Depot, no family: anywhere


def test_the_collectors_poll_set_follows_a_replacement_that_reuses_the_dead_workers_descriptors():
    import multiprocessing.connection
    import socket
    from depot.dask._pool import _Poller
    wake_r, wake_w = os.pipe()
    ours, theirs = socket.socketpair()
    dead, replacement = _StandIn(300), _StandIn(301)
    try:
        dead.conn = multiprocessing.connection.Connection(os.dup(ours.fileno()))
        dead.sentinel = replacement.sentinel = None
        poller = _Poller(wake_r)
        theirs.sendall(b"\0\0\0\1x")
        assert poller.wait([dead]) == [(dead, _Poller.CONN)]
        number = dead.conn.fileno()
        dead.conn.close()
        replacement.conn = multiprocessing.connection.Connection(os.dup(ours.fileno()))
        assert replacement.conn.fileno() == number  # the lowest free descriptor: the dead worker's
        assert poller.wait([replacement]) == [(replacement, _Poller.CONN)]
    finally:
        for w in (dead, replacement):
            if getattr(w, "conn", None) is not None and not w.conn.closed:
                w.conn.close()
        ours.close()
        theirs.close()
        os.close(wake_r)
        os.close(wake_w)
