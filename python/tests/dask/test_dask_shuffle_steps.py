"""The blockwise steps after a Depot shuffle run in its reduce tasks (dask-expr, and the legacy DataFrame through
``dataframe_optimize``): the optimised graph has no task of their own for them, the results are Dask's, and a
shuffle that more than one expression reads keeps its partitions as they are."""

import pytest

np = pytest.importorskip("numpy")
pd = pytest.importorskip("pandas", reason="DataFrame shuffles need pandas")
dd = pytest.importorskip("dask.dataframe", reason="DataFrame shuffles need dask.dataframe")

import dask  # noqa: E402

import depot.dask.dataframe as depot_dataframe  # noqa: E402

from dask_fixtures import dask_daemon, scheduler, store_objects  # noqa: F401,E402

EXPR = depot_dataframe._is_expr(dd)
DEPOT = {"shuffle_method" if EXPR else "shuffle": "depot"}
TASKS = {"shuffle_method" if EXPR else "shuffle": "tasks"}


def frame(n=3000, partitions=4):
    rng = np.random.default_rng(5)
    pdf = pd.DataFrame({"key": rng.integers(0, 30, n), "value": rng.random(n),
                        "small": rng.integers(-5, 5, n).astype(np.int16)})
    pdf.index = pdf.index * 2
    return dd.from_pandas(pdf, npartitions=partitions)


def optimized_graph(*collections):
    """The graph dask.compute runs for ``collections``."""
    if EXPR:
        from dask._expr import FinalizeCompute
        from dask.base import collections_to_expr
        return dict(FinalizeCompute(collections_to_expr(list(collections))).optimize().__dask_graph__())
    from dask.base import collections_to_dsk
    return dict(collections_to_dsk(collections, optimize_graph=True))


def reducers(graph):
    """The keys of the tasks that run a Depot shuffle's reduce."""
    from dask.utils import key_split
    from depot.dask._shuffle_tasks import reduce_partition, reduce_partition_for_steps

    def reduces(task):
        if isinstance(task, (tuple, list)):
            return any(t in (reduce_partition, reduce_partition_for_steps) or reduces(t) for t in task)
        return False

    if EXPR:
        return {k for k in graph if key_split(k) == "depotshuffle"}
    return {k for k, task in graph.items() if reduces(task)}


def readers_of_reducers(graph):
    """The names of the expressions or layers whose tasks read the reduce tasks."""
    from dask.core import get_dependencies
    keys = reducers(graph)
    return {k[0] if isinstance(k, tuple) else k for k in graph if keys & set(get_dependencies(graph, k))}


def _scaled(part, factor):
    return part * factor


STEPS = {
    "select_sum": lambda s: s.value.sum(),
    "select_map_sum": lambda s: s.value.map_partitions(_scaled, 2.0).sum(),
    "arithmetic_max": lambda s: (s.value * 3 + 1).max(),
    "filter_count": lambda s: s[s.value > 0.5].small.count(),  # the legacy DataFrame reads the shuffle twice
}


@pytest.mark.parametrize("name", sorted(STEPS))
def test_the_blockwise_steps_after_a_shuffle_run_in_its_reduce_tasks(dask_daemon, monkeypatch, name):
    if name == "filter_count" and not EXPR:
        pytest.skip("the legacy DataFrame's filter reads the shuffled frame twice")
    monkeypatch.setenv("DEPOT_DIR", dask_daemon.dir)
    ddf = frame()
    step = STEPS[name]
    result = step(ddf.shuffle("key", **DEPOT))
    graph = optimized_graph(result)
    assert len(reducers(graph)) == 4
    assert len(readers_of_reducers(graph)) == 1  # the reduction's tree, which reads their chunks
    expected = step(ddf.shuffle("key", **TASKS)).compute(scheduler="sync")
    assert result.compute(scheduler="sync") == pytest.approx(expected)
    assert store_objects(dask_daemon.dir, b"") == []


def test_steps_run_in_the_reduce_tasks_on_the_depot_scheduler(scheduler, dask_daemon):
    ddf = frame()
    expected = ddf.shuffle("key", **TASKS).value.sum().compute(scheduler="sync")
    with dask.config.set(scheduler=scheduler):
        result = ddf.shuffle("key").value.sum()
        assert len(readers_of_reducers(optimized_graph(result))) == 1
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
    assert len(readers_of_reducers(graph)) == 2  # one selection each: neither is in the reduce tasks
    expected = dask.compute(ddf.shuffle("key", **TASKS).value.sum(), ddf.shuffle("key", **TASKS).small.max(),
                            scheduler="sync")
    got = dask.compute(total, largest, scheduler="sync")
    assert got[0] == pytest.approx(expected[0]) and got[1] == expected[1]
    assert store_objects(dask_daemon.dir, b"") == []


@pytest.mark.skipif(EXPR, reason="the legacy DataFrame's optimiser")
def test_the_legacy_dataframe_optimiser_is_dasks_then_absorb_steps():
    from depot.dask import _legacy_steps
    assert dask.config.get("dataframe_optimize", None) is None  # the configuration stays the user's
    assert dask.config.serialize(dask.config.global_config)  # as SSHCluster passes it to its processes
    assert frame().__dask_optimize__ is _legacy_steps.optimize and frame().value.sum().__dask_optimize__ is \
        _legacy_steps.optimize
    ddf = frame()
    plain = ddf.value.sum()  # no shuffle: Dask's own optimisation, unchanged
    from dask.dataframe.optimize import optimize as dask_optimize
    ours = _legacy_steps.optimize(plain.__dask_graph__(), plain.__dask_keys__())
    dasks = dask_optimize(plain.__dask_graph__(), plain.__dask_keys__())
    assert {n: type(l) for n, l in ours.layers.items()} == {n: type(l) for n, l in dasks.layers.items()}
    assert ours.dependencies == dasks.dependencies and set(dict(ours)) == set(dict(dasks))


def _division_of(part, partition_info=None):
    return pd.Series([partition_info["division"]])


@pytest.mark.skipif(not EXPR, reason="dask-expr expressions carry divisions")
def test_steps_in_the_reduce_tasks_keep_the_divisions_they_give(dask_daemon, monkeypatch):
    """``set_index``'s steps after its shuffle know the new divisions; the tasks after them see them too."""
    monkeypatch.setenv("DEPOT_DIR", dask_daemon.dir)
    by_key = frame().set_index("key", **DEPOT)
    assert by_key.known_divisions
    assert by_key.expr.optimize(fuse=False).divisions == by_key.divisions
    divisions = by_key.map_partitions(_division_of, meta=(None, "int64")).compute(scheduler="sync")
    assert list(divisions) == list(by_key.divisions[:-1])
    assert store_objects(dask_daemon.dir, b"") == []


def _largest(group):
    return group.nlargest(2)


def _sorted(frame_):
    return frame_.sort_values(list(frame_.columns)).reset_index(drop=True)


@pytest.mark.parametrize("name", ["merge", "groupby_apply"])
def test_merges_and_groupbys_that_shuffle_through_depot_equal_dasks(dask_daemon, monkeypatch, name):
    """A merge reads two shuffles (its join stays a task of its own); a groupby's apply reads one (it runs in the
    reduce tasks)."""
    monkeypatch.setenv("DEPOT_DIR", dask_daemon.dir)
    ddf = frame()
    other = dd.from_pandas(pd.DataFrame({"key": np.arange(30), "label": np.arange(30) * 10}), npartitions=3)

    def run(method):
        with dask.config.set({"dataframe.shuffle.method" if EXPR else "shuffle": method}):
            if name == "merge":
                out = ddf.merge(other, on="key", how="inner", npartitions=4)
            else:
                out = ddf.groupby("key").value.apply(_largest, meta=("value", "f8")).reset_index()
            return _sorted(out.compute(scheduler="sync")), reducers(optimized_graph(out))

    (got, reduces), (expected, _) = run("depot"), run("tasks")
    assert reduces  # it went through Depot
    pd.testing.assert_frame_equal(got, expected, check_dtype=False)
    assert store_objects(dask_daemon.dir, b"") == []


def _kept_columns(graph):
    """The columns the maps' ShuffleSpec stores, for each spec in ``graph`` (None: all)."""
    from depot.dask._shuffle_tasks import ShuffleSpec
    found = {}

    def walk(task):
        if isinstance(task, ShuffleSpec):
            found[task.token] = task.keep
        elif isinstance(task, (tuple, list)):
            for t in task:
                walk(t)

    for task in graph.values():
        walk(task)
    return sorted(map(repr, found.values()))


@pytest.mark.skipif(EXPR, reason="dask-expr pushes the projection into the shuffle itself")
@pytest.mark.parametrize("select,kept", [(lambda s: s.value.sum(), ["value"]),
                                         (lambda s: s[["value", "small"]].sum(), ["value", "small"])])
def test_legacy_maps_store_only_the_columns_the_steps_select(dask_daemon, monkeypatch, select, kept):
    monkeypatch.setenv("DEPOT_DIR", dask_daemon.dir)
    ddf = frame()
    result = select(ddf.shuffle("key", **DEPOT))
    assert _kept_columns(optimized_graph(result)) == [repr(kept)]
    expected = select(ddf.shuffle("key", **TASKS)).compute(scheduler="sync")
    got = result.compute(scheduler="sync")
    assert np.allclose(np.asarray(got, dtype=float), np.asarray(expected, dtype=float))
    both = optimized_graph(ddf.shuffle("key", **DEPOT).value.sum(), ddf.shuffle("key", **DEPOT).small.max())
    assert _kept_columns(both) == [repr(None)]  # two readers: every column
    assert store_objects(dask_daemon.dir, b"") == []
