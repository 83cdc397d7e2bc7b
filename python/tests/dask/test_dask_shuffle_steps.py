"""The blockwise steps after a Depot shuffle run in its reduce tasks (dask-expr): the optimised graph has no task
of its own for them, the results are Dask's, and a shuffle that more than one expression reads keeps its
partitions as they are."""

import pytest

np = pytest.importorskip("numpy")
pd = pytest.importorskip("pandas", reason="DataFrame shuffles need pandas")
dd = pytest.importorskip("dask.dataframe", reason="DataFrame shuffles need dask.dataframe")

import dask  # noqa: E402

import depot.dask.dataframe as depot_dataframe  # noqa: E402

from dask_fixtures import dask_daemon, scheduler, store_objects  # noqa: F401,E402

pytestmark = pytest.mark.skipif(not depot_dataframe._is_expr(dd), reason="dask-expr DataFrames only")

DEPOT = {"shuffle_method": "depot"}
TASKS = {"shuffle_method": "tasks"}


def frame(n=3000, partitions=4):
    rng = np.random.default_rng(5)
    pdf = pd.DataFrame({"key": rng.integers(0, 30, n), "value": rng.random(n),
                        "small": rng.integers(-5, 5, n).astype(np.int16)})
    pdf.index = pdf.index * 2
    return dd.from_pandas(pdf, npartitions=partitions)


def optimized_graph(*collections):
    """The graph dask.compute runs for ``collections``."""
    from dask._expr import FinalizeCompute
    from dask.base import collections_to_expr
    return dict(FinalizeCompute(collections_to_expr(list(collections))).optimize().__dask_graph__())


def readers_of_reducers(graph, split=True):
    """The names of the tasks that read the Depot shuffle's reduce tasks (their expressions' names unless
    ``split``, which keeps only the name's operation)."""
    from dask.core import get_dependencies
    from dask.utils import key_split
    return {key_split(k) if split else k[0] for k in graph
            if any(key_split(d) == "depotshuffle" for d in get_dependencies(graph, k))}


def reducers(graph):
    from dask.utils import key_split
    return [k for k in graph if key_split(k) == "depotshuffle"]


def _scaled(part, factor):
    return part * factor


STEPS = {
    "select_sum": lambda s: s.value.sum(),
    "select_map_sum": lambda s: s.value.map_partitions(_scaled, 2.0).sum(),
    "arithmetic_max": lambda s: (s.value * 3 + 1).max(),
    "filter_count": lambda s: s[s.value > 0.5].small.count(),
}


@pytest.mark.parametrize("name", sorted(STEPS))
def test_the_blockwise_steps_after_a_shuffle_run_in_its_reduce_tasks(dask_daemon, monkeypatch, name):
    monkeypatch.setenv("DEPOT_DIR", dask_daemon.dir)
    ddf = frame()
    step = STEPS[name]
    result = step(ddf.shuffle("key", **DEPOT))
    graph = optimized_graph(result)
    assert len(reducers(graph)) == 4
    # the reduction's chunks run in the reducers: only its tree reads them
    assert readers_of_reducers(graph) <= {"sum-tree", "max-tree", "count-tree"}
    expected = step(ddf.shuffle("key", **TASKS)).compute(scheduler="sync")
    assert result.compute(scheduler="sync") == pytest.approx(expected)
    assert store_objects(dask_daemon.dir, b"") == []


def test_steps_run_in_the_reduce_tasks_on_the_depot_scheduler(scheduler, dask_daemon):
    ddf = frame()
    expected = ddf.shuffle("key", **TASKS).value.sum().compute(scheduler="sync")
    with dask.config.set(scheduler=scheduler):
        result = ddf.shuffle("key").value.sum()
        assert readers_of_reducers(optimized_graph(result)) == {"sum-tree"}
        assert result.compute() == pytest.approx(expected)
        frame_result = ddf.shuffle("key")[["value"]].compute()  # a frame, not a scalar, out of the steps
    pd.testing.assert_frame_equal(frame_result.sort_index(),
                                  ddf.shuffle("key", **TASKS)[["value"]].compute(scheduler="sync").sort_index())


def test_a_shuffle_that_two_expressions_read_keeps_its_partitions(dask_daemon, monkeypatch):
    monkeypatch.setenv("DEPOT_DIR", dask_daemon.dir)
    ddf = frame()
    shuffled = ddf.shuffle("key", **DEPOT)
    total, largest = shuffled.value.sum(), shuffled.small.max()
    graph = optimized_graph(total, largest)
    assert len(readers_of_reducers(graph, split=False)) == 2  # one selection each: neither is in the reduce tasks
    expected = dask.compute(ddf.shuffle("key", **TASKS).value.sum(), ddf.shuffle("key", **TASKS).small.max(),
                            scheduler="sync")
    got = dask.compute(total, largest, scheduler="sync")
    assert got[0] == pytest.approx(expected[0]) and got[1] == expected[1]
    assert store_objects(dask_daemon.dir, b"") == []
