"""depot.dask's continuations: a batch of one task carries the dependents its worker can run right after it with
inputs it holds (``_continuations.chain``); the worker runs them only while it still holds those inputs
(``_worker._continue``); the pool hands their results to ``get_async`` when it submits those keys. The chains are
tested on a compute's plain data, without a pool."""

import collections
import itertools
import os

import pytest

pytest.importorskip("dask")

import dask  # noqa: E402
np = pytest.importorskip("numpy")

import depot.dask  # noqa: E402
from depot.dask import _continuations, _worker  # noqa: E402
from depot.dask._compute import Batch, Compute  # noqa: E402
from depot.dask._refs import Held, Stored  # noqa: E402
from dask_fixtures import clean_store, dask_daemon, scheduler  # noqa: E402,F401
from test_dask_placement import _tree as _tree_dependents  # noqa: E402

_ids = itertools.count(1)


class _Cache(dict):
    """``get_async``'s cache as ``_continuations`` reads it (a mapping); ``_data`` as the scheduler's ``_Results``
    names its contents."""

    @property
    def _data(self):
        return self


def _tree_compute(leaves=4):
    """Two workers' pids and a compute of a pairwise tree: ``leaf-i``, ``combine-1-i``, ..."""
    compute = Compute(os.urandom(8), 1)
    dependents = _tree_dependents(leaves)
    dependencies = collections.defaultdict(set)
    for key, ds in dependents.items():
        for d in ds:
            dependencies[d].add(key)
    compute.dependents, compute.dependencies = dependents, dict(dependencies)
    compute.dsk = {key: ("task of", key) for key in dependents}
    compute.results, compute.chunksize = _Cache(), 1
    return (100, 101), compute


def _send(compute, key, pid):
    """What the pool's dispatch does for a batch of ``key`` sent to worker ``pid``; returns the continuations' keys
    and inputs."""
    batch = Batch(next(_ids), compute, [key], {key: os.urandom(20)}, [], b"", {})
    chain = _continuations.chain(compute, batch, pid)
    compute.sent[key] = (pid, batch.oids[key])
    for d, _, raw in chain:
        compute.sent[d] = (pid, raw)
    return [(d, sorted(inputs), {k: (v.holder, bytes(v.oid)) if isinstance(v, Held) else v
                                 for k, v in inputs.items()}) for d, (_, inputs), _ in chain], batch


def test_a_leaf_carries_the_combine_whose_other_input_its_worker_computes_before_it():
    pids, compute = _tree_compute()
    a, b = pids
    assert _send(compute, "leaf-0", a)[0] == []  # its sibling is nowhere yet
    chain, batch = _send(compute, "leaf-1", a)
    (d, inputs, refs), = chain
    assert d == "combine-1-0" and inputs == ["leaf-0", "leaf-1"]
    assert refs == {"leaf-0": (a, compute.sent["leaf-0"][1]), "leaf-1": (a, batch.oids["leaf-1"])}
    # the other family: its sibling on the other worker ties nothing
    assert _send(compute, "leaf-2", b)[0] == []
    assert _send(compute, "leaf-3", a)[0] == []


def test_a_chain_climbs_while_every_input_is_on_the_same_worker():
    pids, compute = _tree_compute()
    a, _ = pids
    for key in ("leaf-0", "leaf-1", "leaf-2"):
        _send(compute, key, a)
    chain, _ = _send(compute, "leaf-3", a)
    assert [d for d, _, _ in chain] == ["combine-1-1", "combine-2-0"]
    # the top combine's inputs: one continuation sent with leaf-1's batch, one earlier in this chain
    assert chain[1][2]["combine-1-0"] == (a, compute.continued["combine-1-0"])
    assert chain[1][2]["combine-1-1"] == (a, compute.continued["combine-1-1"])


def test_inputs_already_computed_count_where_they_are_held_or_anywhere_when_in_depot():
    pids, compute = _tree_compute()
    a, b = pids
    compute.results._data["leaf-0"] = Held(os.urandom(20), 1 << 20, b)
    assert _send(compute, "leaf-1", a)[0] == []  # held by the other worker
    compute.results._data["leaf-2"] = Stored(os.urandom(20), 1 << 20)
    chain, _ = _send(compute, "leaf-3", a)
    assert [d for d, _, _ in chain] == ["combine-1-1"]  # a stored input can be read anywhere
    pids, compute = _tree_compute()
    a, b = pids
    ran_here = Held(os.urandom(20), 1 << 20, a)
    compute.precomputed["leaf-0"] = ((ran_here, a), False)  # as a worker sends it, not submitted yet
    (_, _, refs), = _send(compute, "leaf-1", a)[0]
    assert refs["leaf-0"] == (a, bytes(ran_here.oid))
    compute.precomputed["leaf-2"] = ((Held(os.urandom(20), 1 << 20, b), b), False)
    assert _send(compute, "leaf-3", a)[0] == []  # it ran on the other worker
    pids, compute = _tree_compute()
    compute.precomputed["leaf-0"] = ((ValueError("x"), "traceback"), True)
    assert _send(compute, "leaf-1", pids[0])[0] == []  # a failed input is nobody's


def test_no_continuations_for_batches_of_several_tasks():
    pids, compute = _tree_compute()
    a, _ = pids
    _send(compute, "leaf-0", a)
    compute.chunksize = 6
    assert _send(compute, "leaf-1", a)[0] == []


def test_results_of_continuations_wait_until_get_async_submits_their_keys_and_are_taken_once():
    pids, compute = _tree_compute()
    batch = Batch(next(_ids), compute, ["leaf-1"], {"leaf-1": os.urandom(20)}, [], b"", {})
    compute.continued["combine-1-0"] = os.urandom(20)
    own, continued = ("leaf-1", ("leaf result", pids[0]), False), ("combine-1-0", ("its result", pids[0]), False, True)
    assert _continuations.keep(compute, batch, [own, continued]) == [own]
    assert _continuations.take(compute, "combine-1-0") == (("its result", pids[0]), False)
    assert "combine-1-0" not in compute.continued and _continuations.take(compute, "combine-1-0") is None


def test_a_worker_runs_no_continuation_whose_input_it_does_not_hold():
    state = _worker._WorkerState(None, 1 << 16)
    held_here = os.urandom(20)
    state.held[held_here] = np.ones(4)
    elsewhere = Held(os.urandom(20), 32, state.pid + 1)
    given_back = Held(os.urandom(20), 32, state.pid)  # a batch of it was sent here, then given back
    for inputs in ({"a": Held(held_here, 32, state.pid), "b": elsewhere},
                   {"a": Held(held_here, 32, state.pid), "b": given_back}):
        # the task is never looked at: nothing runs
        assert _worker._continue(state, [("combine", (object(), inputs), os.urandom(20))], {}) == []


def _tree(leaves, size):
    @dask.delayed(pure=True)
    def leaf(i):
        return np.full(size, float(i))

    @dask.delayed(pure=True)
    def combine(x, y):
        return x + y

    level = [leaf(i) for i in range(leaves)]
    while len(level) > 1:
        level = [combine(level[i], level[i + 1]) for i in range(0, len(level), 2)]
    return level[0]


def test_a_tree_computed_with_continuations_equals_the_synchronous_schedulers(scheduler, clean_store):
    before = scheduler._pool.continuations_used_count
    tree = _tree(16, 20000)  # results above inline_bytes: held by their workers
    got = tree.compute(scheduler=scheduler)
    np.testing.assert_array_equal(got, tree.compute(scheduler="sync"))
    assert scheduler._pool.continuations_used_count > before
    del got


def test_a_continuation_that_raises_fails_the_compute_naming_its_task_with_the_workers_traceback(scheduler,
                                                                                                 clean_store):
    @dask.delayed(pure=True)
    def leaf(i):
        return np.full(20000, float(i))

    @dask.delayed(pure=True)
    def bad_combine(x, y):
        raise ArithmeticError("cannot combine %d" % int(x[0] + y[0]))

    total = dask.delayed(sum)([bad_combine(leaf(2 * i), leaf(2 * i + 1), dask_key_name="bad-%d" % i)
                               for i in range(4)])
    with pytest.raises(ArithmeticError, match="cannot combine") as info:
        total.compute(scheduler=scheduler)
    cause = info.value.__cause__
    assert isinstance(cause, depot.dask.RemoteTraceback) and "bad-" in str(cause) and "bad_combine" in str(cause)
