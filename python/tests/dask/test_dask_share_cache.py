"""depot.dask.share (put once, pass references), depot.dask.Cache and depot.cache.memoize (one cache for every
process), with the synchronous, threaded, process and depot.dask schedulers."""

import os
import time
import uuid

import pytest

from dask_fixtures import clean_store, dask_daemon, scheduler, store_objects  # noqa: F401

import dask  # noqa: E402
import numpy as np  # noqa: E402

import depot.cache  # noqa: E402
import depot.dask  # noqa: E402
from conftest import python_child  # noqa: E402
from dask_graphs import _graph  # noqa: E402


def _pick(a, i):
    return float(a[i])


def test_shared_object_is_stored_once_and_read_by_every_task(scheduler, clean_store):
    import dask.array as da
    table = np.arange(1 << 18, dtype=np.float64)
    with depot.dask.share(table, dir=clean_store) as shared:
        assert dask.sizeof.sizeof(shared) >= table.nbytes
        assert dask.base.tokenize(shared) == dask.base.tokenize(shared)
        picks = [dask.delayed(_pick)(shared, i) for i in range(8)]
        assert dask.compute(*picks, scheduler=scheduler) == tuple(float(i) for i in range(8))
        assert dask.compute(*picks, scheduler="sync") == tuple(float(i) for i in range(8))
        blocks = da.zeros(1000, chunks=250).map_blocks(lambda b, t: b + t[:250], shared, dtype=float)
        np.testing.assert_array_equal(blocks.compute(scheduler=scheduler), np.tile(table[:250], 4))
        # one copy of the table in the store: the scheduler made none of its own
        assert [i for i in store_objects(clean_store) if i.data_size >= table.nbytes] != []
        assert store_objects(clean_store, scheduler._pool.token) == []
    assert store_objects(clean_store, depot.dask.shared.SHARE_TAG) == []


def test_shared_object_in_map_partitions(scheduler, clean_store):
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe", reason="dask.dataframe needs pandas")
    pdf = pd.DataFrame({"k": np.arange(1000) % 10, "v": np.arange(1000.0)})
    weights = np.arange(10, dtype=np.float64)
    with depot.dask.share(weights, dir=clean_store) as shared:
        df = dd.from_pandas(pdf, npartitions=4)
        out = df.map_partitions(lambda p, w: p.v * w[p.k.values], shared, meta=("v", "f8"))
        pd.testing.assert_series_equal(out.compute(scheduler=scheduler), pdf.v * weights[pdf.k.values],
                                       check_names=False)


@pytest.mark.parametrize("which", ["sync", "threads", "processes", "depot"])
def test_cache_hits_skip_computation_with_every_scheduler(which, scheduler, clean_store, tmp_path):
    log = str(tmp_path / "log")
    namespace = "test-" + uuid.uuid4().hex
    sched = scheduler if which == "depot" else which
    with depot.dask.Cache(64 << 20, dir=clean_store, namespace=namespace) as cache:
        first = _graph(log).compute(scheduler=sched)
    computed = open(log).read().split()
    if which != "processes":  # the process scheduler's children write the log too; they do write it
        assert sorted(computed) == ["0", "1", "2", "3"]
    with depot.dask.Cache(64 << 20, dir=clean_store, namespace=namespace) as cache:
        assert _graph(log).compute(scheduler=sched) == first
        assert cache.hits > 0
    assert open(log).read().split() == computed
    cache.clear()


CACHED_CHILD = r"""
import sys, dask, numpy as np, depot.dask
sys.path.insert(0, sys.argv[3])
from dask_graphs import _graph
with depot.dask.Cache(64 << 20, dir=sys.argv[1], namespace=sys.argv[2]) as c:
    # slow enough that both children want the same parts at once
    print("total", _graph(sys.argv[4], 0.5).compute(scheduler="threads"), c.hits, flush=True)
"""


def test_a_second_process_gets_the_hits_and_concurrent_computations_run_once(dask_daemon, tmp_path):
    log = str(tmp_path / "log")
    namespace = "test-" + uuid.uuid4().hex
    here = os.path.dirname(os.path.abspath(__file__))
    with python_child(CACHED_CHILD, dask_daemon.dir, namespace, here, log) as a, \
            python_child(CACHED_CHILD, dask_daemon.dir, namespace, here, log) as b:
        ra = a.await_line("total", timeout=120).split()
        rb = b.await_line("total", timeout=120).split()
    assert ra[1] == rb[1] == str(float(50000 * 6))
    assert sorted(open(log).read().split()) == ["0", "1", "2", "3"]  # each part computed once, by either
    with python_child(CACHED_CHILD, dask_daemon.dir, namespace, here, log) as c:
        assert int(c.await_line("total", timeout=120).split()[2]) >= 1
    assert sorted(open(log).read().split()) == ["0", "1", "2", "3"]
    depot.cache.SharedCache(1, dir=dask_daemon.dir, namespace=namespace).clear()


def test_cache_keeps_within_its_limit_by_score(dask_daemon):
    cache = depot.cache.SharedCache(3 << 20, dir=dask_daemon.dir, namespace="test-" + uuid.uuid4().hex)
    for i in range(6):
        cache.put("cheap-%d" % i, np.ones(1 << 17), cost=0.001)  # 1 MiB each, cheap
    cache.put("dear", np.ones(1 << 17), cost=10.0)
    cache.shrink()
    assert sum(info.data_size for info, _, _ in cache.entries()) <= 3 << 20
    assert cache.lookup("dear")[0]
    cache.clear()
    assert cache.entries() == []


def _slow_copy(a, seconds):
    time.sleep(seconds)
    return a.copy()


def test_cache_scores_a_task_run_as_a_continuation_by_its_time_in_the_worker(scheduler, clean_store):
    # ``heavy`` is ``leaf``'s only dependent: the worker running ``leaf`` runs it right after, as a continuation,
    # and get_async's clock would see it end the moment it is submitted
    leaf = dask.delayed(np.full, pure=True)(20000, 1.0)
    heavy = dask.delayed(_slow_copy, pure=True)(leaf, 0.3)
    cache = depot.dask.Cache(64 << 20, dir=scheduler.directory, namespace="test-" + uuid.uuid4().hex)
    before = scheduler._pool.continuations_used_count
    try:
        with cache:
            np.testing.assert_array_equal(heavy.compute(scheduler=scheduler), np.full(20000, 1.0))
        assert scheduler._pool.continuations_used_count > before
        assert cache.durations[heavy.key] >= 0.3
        assert depot.dask.scheduler.task_seconds(heavy.key) is None  # only inside a depot.dask compute
    finally:
        cache.clear()


def test_memoize_computes_once_per_arguments(dask_daemon, tmp_path):
    calls = []

    @depot.cache.memoize(limit_bytes=16 << 20, dir=dask_daemon.dir, namespace="test-" + uuid.uuid4().hex)
    def features(n):
        calls.append(n)
        return np.arange(n, dtype=np.float64)

    np.testing.assert_array_equal(features(1000), np.arange(1000.0))
    np.testing.assert_array_equal(features(1000), np.arange(1000.0))
    features(10)
    assert calls == [1000, 10]
    features.cache.clear()


def _context_seen(_):
    from depot import _task_context
    context = _task_context.current()
    if context is None:
        return None
    return os.getpid(), context.client.directory, context.id_prefix, context.adopt is not None


def test_tasks_see_the_task_context_of_their_worker_and_compute(scheduler, clean_store):
    seen = dask.compute(*[dask.delayed(_context_seen)(i) for i in range(4)], scheduler=scheduler)
    assert {pid for pid, _, _, _ in seen} <= set(scheduler.workers)
    assert {(directory, adopt) for _, directory, _, adopt in seen} == {(scheduler.directory, True)}
    # one compute: one id prefix, the scheduler's token and the compute's number
    prefixes = {prefix for _, _, prefix, _ in seen}
    assert len(prefixes) == 1 and prefixes.pop().startswith(scheduler._pool.token)
    assert dask.compute(dask.delayed(_context_seen)(0), scheduler="threads") == (None,)


MEMOIZED_IN_TASKS = {}


def _memoized_in_task(directory, namespace, n):
    from depot import _task_context
    fn = MEMOIZED_IN_TASKS.get(namespace)
    if fn is None:
        fn = MEMOIZED_IN_TASKS[namespace] = depot.cache.memoize(16 << 20, dir=directory, namespace=namespace)(
            lambda n: np.full(n, float(os.getpid())))
    assert fn.cache.client is _task_context.current().client  # the worker's own client, no second one
    return float(fn(n)[0])


def test_memoize_in_depot_dask_tasks_uses_the_workers_client_and_computes_once(scheduler, clean_store):
    namespace = "test-" + uuid.uuid4().hex
    calls = [dask.delayed(_memoized_in_task, pure=False)(clean_store, namespace, 50000) for _ in range(6)]
    got = dask.compute(*calls, scheduler=scheduler)
    assert len(set(got)) == 1 and int(got[0]) in scheduler.workers  # every call read one worker's result
    depot.cache.SharedCache(1, dir=clean_store, namespace=namespace).clear()
