"""depot.dask's placement (``_placement``): a worker with room takes the queued batch of its own family, or of
none, before one that another worker's inputs or family wait for; it never idles while a batch waits; and an idle
worker takes back a batch waiting behind another's running one.

The policy is tested on plain data, as the pool keeps it (``_Placing``); the worker's side of taking back and the
pool's poll set on real pipes."""

import collections
import os

import pytest

pytest.importorskip("dask")

from depot.dask import _placement  # noqa: E402
from depot.dask._compute import held_by  # noqa: E402
from depot.dask._refs import Held, Inline  # noqa: E402
from depot.dask._transport import RunBatch  # noqa: E402
from dask_fixtures import clean_store, dask_daemon, scheduler  # noqa: E402,F401


class _Placing:
    """What the pool's dispatch hands ``_placement``, as plain data: the live workers' pids and the keys each has in
    flight, the queued batches ``(key, held inputs)``, the graph's dependents, the families (``homes``), the shares
    (``roots``) and the held results in Depot (``published``). ``place_next`` does what the dispatch does with
    ``choose``'s answer, without sending anything."""

    def __init__(self, workers=2, depth=2, dependents=None):
        self.pids = [100 + i for i in range(workers)]
        self.alive = set(self.pids)
        self.depth = depth
        self.inflight = {pid: [] for pid in self.pids}
        self.pending = []
        self.dependents = dependents
        self.homes = {}
        self.roots = {}
        self.published = set()

    def queue(self, keys, held=()):
        self.pending.extend((key, list(held)) for key in keys)

    def preference(self, key, held):
        share = self.roots.get(key)
        share_pid = self.pids[share] if share is not None and self.pids[share] in self.alive else None
        return _placement.preference(held, self.published, self.dependents, self.homes, key, share_pid)

    def choose(self):
        return _placement.choose({p: len(self.inflight[p]) for p in self.pids if p in self.alive}, self.depth,
                                 (self.preference(key, held) for key, held in self.pending))

    def place_next(self):
        """``(pid, key)`` of the batch placed next."""
        pid, i = self.choose()
        key, _ = self.pending.pop(i)
        self.inflight[pid].append(key)
        _placement.claim(self.dependents, self.homes, key, pid)
        return pid, key

    def finish(self, pid, key):
        self.inflight[pid].remove(key)


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


def _popped(ready):
    """The order in which ``get_async`` takes the tasks of ``ready`` (it pops from the end)."""
    return ready[::-1]


def _split_tree(leaves):
    """Two workers placing a tree of ``leaves`` leaves, split into two shares; returns them and ``get_async``'s
    reordered ready list."""
    placing = _Placing(dependents=_tree(leaves))
    ready = _popped(["leaf-%d" % i for i in range(leaves)])
    placing.roots = _placement.split_roots(ready, 2, 1)
    return placing, ready


def _by_worker(placed):
    out = collections.defaultdict(set)
    for pid, key in placed:
        out[pid].add(key)
    return out


def test_the_first_leaves_of_a_tree_go_to_one_worker_per_grandparent():
    placing = _Placing(dependents=_tree(16))
    # get_async has submitted the first workers x depth x 2 leaves
    placing.queue(["leaf-%d" % i for i in range(8)])
    placed = [placing.place_next() for _ in range(4)]
    by_worker = _by_worker(placed)
    # each worker has two siblings of one grandparent: leaves 0-3 (combine-2-0) and 4-7 (combine-2-1)
    assert sorted(sorted(keys) for keys in by_worker.values()) == [["leaf-0", "leaf-1"], ["leaf-4", "leaf-5"]]
    assert placing.choose() is None  # both workers are full (depth 2)
    # a worker that finishes takes the next leaf of its own grandparent's family
    pid_of_0 = next(pid for pid, key in placed if key == "leaf-0")
    placing.finish(pid_of_0, "leaf-0")
    assert placing.place_next() == (pid_of_0, "leaf-2")


def test_the_tasks_ready_at_the_start_are_split_into_one_contiguous_share_per_worker():
    ready = _popped(["leaf-%d" % i for i in range(8)])
    roots = _placement.split_roots(ready, 2, 1)
    assert _popped(ready) == ["leaf-0", "leaf-4", "leaf-1", "leaf-5", "leaf-2", "leaf-6", "leaf-3", "leaf-7"]
    assert roots == {"leaf-%d" % i: i // 4 for i in range(8)}


def test_shares_are_submitted_side_by_side_a_chunk_at_a_time_and_may_differ_by_one():
    ready = _popped(["leaf-%d" % i for i in range(8)])
    _placement.split_roots(ready, 2, 2)
    assert _popped(ready) == ["leaf-0", "leaf-1", "leaf-4", "leaf-5", "leaf-2", "leaf-3", "leaf-6", "leaf-7"]
    ready = _popped(["t%d" % i for i in range(5)])
    roots = _placement.split_roots(ready, 3, 1)
    assert _popped(ready) == ["t0", "t1", "t3", "t2", "t4"]
    assert [roots["t%d" % i] for i in range(5)] == [0, 1, 1, 2, 2]


def test_nothing_is_split_for_one_worker_or_one_task():
    for ready, workers in ((["b", "a"], 1), (["a"], 2), ([], 2)):
        before = list(ready)
        assert _placement.split_roots(ready, workers, 1) == {}
        assert ready == before


def test_each_worker_runs_the_leaves_of_its_own_share():
    placing, ready = _split_tree(16)
    # get_async submits the first workers x depth x 2 in its (reordered) order
    placing.queue(_popped(ready)[:8])
    by_worker = _by_worker([placing.place_next() for _ in range(4)])
    first, second = placing.pids
    assert by_worker == {first: {"leaf-0", "leaf-1"}, second: {"leaf-8", "leaf-9"}}
    # with its own share done, a worker takes what waits rather than idle
    placing.pending = [(key, held) for key, held in placing.pending if placing.roots[key] == 1]
    for key in ("leaf-0", "leaf-1"):
        placing.finish(first, key)
    assert placing.place_next()[0] == first


def test_a_worker_out_of_its_share_takes_a_family_nobody_started_and_keeps_it():
    placing, _ = _split_tree(16)
    fast, slow = placing.pids
    placing.inflight[slow] = ["running"]
    _placement.claim(placing.dependents, placing.homes, "leaf-8", slow)  # the slow worker started leaves 8-11's family
    # the fast worker has run its whole share; what is queued is the slow worker's
    placing.queue(["leaf-9", "leaf-12"])
    # leaf-9's sibling is on the slow worker: taking it would move a result; leaf-12's family is nobody's yet
    assert placing.place_next() == (fast, "leaf-12")
    placing.finish(fast, "leaf-12")
    # leaf-12's family is the fast worker's now: its siblings follow it there, not to their share's worker
    placing.queue(["leaf-13"])
    placing.inflight[slow] = []
    assert placing.place_next() == (fast, "leaf-13")


def test_a_share_whose_worker_died_prefers_no_worker_of_its_own():
    placing = _Placing()
    placing.roots = {"leaf-0": 1}
    placing.alive.discard(placing.pids[1])
    placing.queue(["leaf-0"])
    assert placing.place_next() == (placing.pids[0], "leaf-0")


def test_a_worker_with_room_takes_a_batch_another_worker_would_rather_run_and_does_not_idle():
    placing = _Placing(dependents=_tree(2))
    placing.queue(["leaf-0", "leaf-1"])
    first = placing.place_next()
    second = placing.place_next()
    # leaf-1's family is the first worker's, but the second has nothing to do: the two run at once
    assert first[1] == "leaf-0" and second[1] == "leaf-1" and first[0] != second[0]


def test_a_batch_goes_to_the_worker_holding_its_inputs_when_that_one_has_room():
    placing = _Placing(dependents={"combine": set(), "other": set()})
    chooser, holder = placing.pids
    placing.inflight[holder] = ["running"]  # busier than the other worker, still with room
    placing.queue(["combine"], held=[Held(os.urandom(20), 8 << 20, holder)])
    placing.queue(["other"])
    # the other worker chooses first (fewest in flight) and leaves the combine to the worker that holds its input
    assert placing.place_next() == (chooser, "other")
    assert placing.place_next() == (holder, "combine")


def test_without_the_graph_batches_go_in_order_to_the_least_busy_worker():
    placing = _Placing(workers=3, depth=1)  # the start-state callback never ran: no dependents
    placing.queue(["a", "b", "c", "d"])
    assert [placing.place_next() for _ in range(3)] == [(100, "a"), (101, "b"), (102, "c")]
    assert placing.choose() is None
    assert [key for key, _ in placing.pending] == ["d"]


def test_a_batch_whose_worker_is_full_waits_unless_another_worker_is_idle():
    placing = _Placing(dependents={"combine": set()})
    busy, other = placing.pids
    placing.inflight = {busy: ["one", "two"], other: ["three"]}
    placing.queue(["combine"], held=[Held(os.urandom(20), 8 << 20, busy)])
    assert placing.choose() is None  # the other worker still has a task to run
    placing.inflight[other] = []
    assert placing.place_next() == (other, "combine")  # idle: it takes it and the input moves


def test_with_every_worker_idle_a_chain_stays_on_the_worker_holding_its_input():
    placing = _Placing(dependents={"step-2": set()})
    holder = placing.pids[1]  # not the first worker, which wins ties
    placing.queue(["step-2"], held=[Held(os.urandom(20), 8 << 20, holder)])
    assert placing.place_next() == (holder, "step-2")


def test_an_input_in_depot_no_longer_ties_a_batch_to_its_holder():
    placing = _Placing()
    a, b = placing.pids
    old, fresh = Held(os.urandom(20), 8 << 20, a), Held(os.urandom(20), 8 << 20, b)
    assert placing.preference("combine", [old, fresh]) == (a, False)  # equal bytes: the first holder
    placing.published.add(bytes(old.oid))
    assert placing.preference("combine", [old, fresh]) == (b, False)  # the input not in Depot decides
    placing.published.add(bytes(fresh.oid))
    assert placing.preference("combine", [old, fresh]) == (None, False)  # all in Depot, no family: anywhere


def test_no_queued_batch_is_looked_at_while_every_worker_is_full():
    def never():
        raise AssertionError("a preference was computed")
        yield
    assert _placement.choose({100: 2, 101: 2}, 2, never()) is None
    assert _placement.choose({100: 0}, 2, iter(())) is None  # nothing queued


def test_an_idle_worker_takes_back_the_batch_waiting_behind_another_workers_running_one():
    assert _placement.take_back_from({100: 2, 101: 0}) == 100
    assert _placement.take_back_from({100: 2, 101: 1}) is None  # nobody is idle
    assert _placement.take_back_from({100: 1, 101: 0}) is None  # the busy worker runs its only batch
    assert _placement.take_back_from({}) is None
    assert _placement.may_take_back(asked=False, unsubmitted=[])
    assert not _placement.may_take_back(asked=True, unsubmitted=[])  # asked once


def test_an_idle_worker_takes_nothing_back_while_get_async_has_tasks_ready_to_submit():
    # get_async submits leaf-9 once it has taken in the result that idled a worker, and that worker takes it
    assert not _placement.may_take_back(asked=False, unsubmitted=["leaf-9"])


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
    # batch 42 is not in flight on worker 100 (given back, run elsewhere): it forgets what it holds of it
    mine, elsewhere = os.urandom(20), os.urandom(20)
    body = [("a", (Held(mine, 1 << 20, 100), 100), False),
            ("b", (Held(elsewhere, 1 << 20, 999), 100), False),
            ("c", (Inline(b"", []), 100), False),
            ("d", (ValueError("x"), "traceback"), True)]
    assert held_by(body, 100) == [mine]


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
