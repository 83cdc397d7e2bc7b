"""Dask DataFrame shuffles through Depot (depot.dask.dataframe): set_index, sort_values and shuffle give what
Dask's own task shuffle gives on the synchronous scheduler, on the depot.dask scheduler and in-process, with
empty partitions, skewed keys and columns that are not plain NumPy arrays; the store ends empty."""

import copy
import time

import pytest

np = pytest.importorskip("numpy")
pd = pytest.importorskip("pandas", reason="DataFrame shuffles need pandas")
dd = pytest.importorskip("dask.dataframe", reason="DataFrame shuffles need dask.dataframe")

import dask  # noqa: E402

import depot.dask.dataframe as depot_dataframe  # noqa: E402
from depot.dask import _shuffle_tasks  # noqa: E402

from dask_fixtures import dask_daemon, scheduler, store_objects  # noqa: F401,E402

EXPR = depot_dataframe._is_expr(dd)
RESULT_PREFIX = b"DdW1"


def method(name):
    """The keyword naming the shuffle method in this Dask version."""
    return {"shuffle_method" if EXPR else "shuffle": name}


def frame(n=2000, partitions=4, seed=1, strings=False):
    rng = np.random.default_rng(seed)
    key = rng.integers(0, 50, n)
    key[rng.random(n) < 0.7] = 7  # skewed: most rows in one partition
    pdf = pd.DataFrame({"key": key, "value": rng.random(n), "small": rng.integers(-5, 5, n).astype(np.int16),
                        "when": pd.to_datetime(rng.integers(0, 10 ** 9, n), unit="s")})
    pdf["value"] = pdf["value"].where(rng.random(n) > 0.05)  # NaN too
    if strings:
        pdf["name"] = ["k%d" % k for k in key]
    pdf.index = pdf.index * 3  # not a RangeIndex 0..n-1: the index travels through the shuffle
    return dd.from_pandas(pdf, npartitions=partitions)


def _empty_first(part):
    return part.iloc[:0] if len(part) and part.index[0] == 0 else part


def with_empty_inputs(ddf):
    # the first partition loses every row: an empty map input
    return ddf.map_partitions(_empty_first, meta=ddf._meta)


OPERATIONS = {
    "set_index": lambda df, kw: df.set_index("key", **kw),
    "set_index_npartitions": lambda df, kw: df.set_index("small", npartitions=12, **kw),  # empty outputs
    "sort_values": lambda df, kw: df.sort_values("value", **kw),
    "sort_values_two": lambda df, kw: df.sort_values(["key", "value"], **kw),
    "shuffle": lambda df, kw: df.shuffle("key", npartitions=6, **kw),
    "shuffle_index": lambda df, kw: df.shuffle("small", **kw),
    "shuffle_fewer_ignore_index": lambda df, kw: df.shuffle("key", npartitions=2, ignore_index=True, **kw),
}


def reference(result_of):
    return result_of(method("tasks")).compute(scheduler="sync")


def partition_lengths(ddf, **compute):
    return [len(p) for p in dask.compute(*ddf.to_delayed(), **compute)]


def assert_same(got, expected):
    pd.testing.assert_frame_equal(got, expected, check_index_type=False)


def uses_depot(collection):
    graph = dict(collection.__dask_graph__())
    return any(isinstance(k, tuple) and str(k[0]).startswith("depot-shuffle-map-") for k in graph)


def test_the_hook_is_installed_in_this_dask_version():
    # Catches a Dask whose internals moved: install() would have warned and returned False.
    assert depot_dataframe.install() is True
    assert depot_dataframe.installed()


#: cases whose partitions are compared one by one too (the others compare the whole result)
PARTITION_CHECKS = ("set_index_npartitions", "shuffle")
CASES = [(name, False) for name in sorted(OPERATIONS)] + [("set_index", True), ("shuffle", True)]


def operation(name):
    if name == "sort_values_two" and not EXPR:
        pytest.skip("Dask's legacy DataFrame sorts by one column only")
    return OPERATIONS[name]


@pytest.mark.parametrize("name,strings", CASES, ids=["%s-%s" % (n, "strings" if s else "numeric") for n, s in CASES])
def test_shuffles_on_the_depot_scheduler_equal_dask_task_shuffle(scheduler, dask_daemon, name, strings):
    op = operation(name)
    ddf = with_empty_inputs(frame(strings=strings))
    expected = reference(lambda kw: op(ddf, kw))
    with dask.config.set(scheduler=scheduler):      # on Depot: no method given means "depot"
        result = op(ddf, {})
        assert uses_depot(result)
        got = result.compute()
        if name in PARTITION_CHECKS and not strings:
            assert partition_lengths(result) == partition_lengths(op(ddf, method("tasks")), scheduler="sync")
    if "ignore_index" in name:  # Dask leaves each piece's own index: only the rows count
        got, expected = got.reset_index(drop=True), expected.reset_index(drop=True)
    assert_same(got, expected)
    assert store_objects(dask_daemon.dir, RESULT_PREFIX) == []


@pytest.mark.parametrize("name", ["set_index", "shuffle"])
def test_shuffle_method_depot_in_process_equals_dask_task_shuffle(dask_daemon, monkeypatch, name):
    monkeypatch.setenv("DEPOT_DIR", dask_daemon.dir)
    op = operation(name)
    ddf = frame(n=2000, partitions=5, seed=2)
    result = op(ddf, method("depot"))
    assert uses_depot(result)
    assert_same(result.compute(scheduler="sync"), reference(lambda kw: op(ddf, kw)))
    assert_same(op(ddf, method("depot")).compute(scheduler="threads"), reference(lambda kw: op(ddf, kw)))
    assert store_objects(dask_daemon.dir, RESULT_PREFIX) == []


def test_a_method_given_in_the_call_wins_on_depot(scheduler):
    ddf = frame(n=200)
    with dask.config.set(scheduler=scheduler):
        assert not uses_depot(ddf.set_index("key", **method("tasks")))


def test_without_depot_dask_keeps_its_own_shuffle():
    ddf = frame(n=200)
    with dask.config.set(scheduler="sync"):
        assert not uses_depot(ddf.set_index("key", **method("tasks")))
        assert not uses_depot(ddf.shuffle("key"))


def test_every_row_goes_to_the_partition_dask_gives_it():
    pdf = frame(n=500).compute()
    pdf["_partitions"] = np.arange(len(pdf)) % 3
    assert (_shuffle_tasks.partition_ids(pdf, "_partitions", 3) == pdf["_partitions"].to_numpy()).all()
    from dask.dataframe.shuffle import shuffle_group
    groups = shuffle_group(pdf, ["key"], 0, 5, 5, False, 5)
    ids = _shuffle_tasks.partition_ids(pdf, ["key"], 5)
    for p in range(5):
        assert list(pdf.index[ids == p]) == list(groups[p].index)


def test_a_failing_map_leaves_nothing_in_the_store(scheduler, dask_daemon):
    ddf = frame(n=1000)

    def boom(part):
        if len(part) and part.index[0] == 0:
            raise ValueError("map input broken")
        return part

    broken = ddf.map_partitions(boom, meta=ddf._meta)
    with dask.config.set(scheduler=scheduler), pytest.raises(ValueError, match="map input broken"):
        broken.set_index("key", divisions=[0, 10, 20, 49]).compute()
    # the maps that ran wrote slices no reducer read: the scheduler deletes them with the failed compute (and
    # those of maps still running then, when their results arrive)
    assert _left_after_running_maps(dask_daemon.dir, scheduler._pool.token) == []


def test_a_failing_map_in_process_leaves_nothing_in_the_store(dask_daemon, monkeypatch):
    monkeypatch.setenv("DEPOT_DIR", dask_daemon.dir)
    ddf = frame(n=1000)

    def boom(part):
        if len(part) and part.index[0] == 0:
            raise ValueError("map input broken")
        return part

    broken = ddf.map_partitions(boom, meta=ddf._meta).set_index("key", divisions=[0, 10, 20, 49], **method("depot"))
    assert "map input broken" in _error_of(lambda: broken.compute(scheduler="threads"))
    # the outputs of the maps that ran own their slices: once Dask (and the exception's traceback, which holds
    # its frames) dropped them, their slices were deleted; maps still running when the compute gave up finish
    # in Dask's thread pool first
    assert _left_after_running_maps(dask_daemon.dir, RESULT_PREFIX) == []


@pytest.mark.parametrize("ignore_index", [False, True])
def test_a_partition_is_built_in_place_in_the_store_as_put_object_would_store_it(dask_daemon, ignore_index):
    from depot.dask._objects import shared_client
    from depot.ids import ObjectId
    import uuid
    client = shared_client(dask_daemon.dir)
    expected = pd.DataFrame({"a": np.arange(1000, dtype=np.int64), "b": np.arange(1000.0), "c": np.arange(1000.0),
                             "d": np.arange(1000, dtype=np.int16)}, index=pd.Index(np.arange(1000) * 2, name="i"))
    if ignore_index:
        expected = expected.reset_index(drop=True)
    spec = _shuffle_tasks.ShuffleSpec("t", "_partitions", 1, None, ignore_index, expected.iloc[:0], dask_daemon.dir)
    arrays = ([] if ignore_index else [expected.index.to_numpy()]) + [expected[c].to_numpy() for c in expected]
    placeholder = _shuffle_tasks._frame_of(spec, [np.empty(1000, a.dtype) for a in arrays], 1000)
    oid = ObjectId(uuid.uuid4().bytes + bytes(4))

    def fill(j, out):
        out[:] = arrays[j]

    assert _shuffle_tasks._store_frame(client, oid, placeholder, fill, ignore_index)
    try:
        got = client.get_object(oid, timeout=0)
        pd.testing.assert_frame_equal(got, expected, check_index_type=not ignore_index)
        del got
    finally:
        client.delete(oid)


def _far_apart(rows):
    """A frame of ``rows`` rows whose last row alone goes to another partition (of 3) than the others: its gap
    from position -1 is ``rows``."""
    key = np.zeros(rows, np.int64)
    candidates = pd.DataFrame({"key": np.arange(1, 10)})
    first = _shuffle_tasks.partition_ids(pd.DataFrame({"key": [0]}), ["key"], 3)[0]
    key[-1] = 1 + int(np.flatnonzero(_shuffle_tasks.partition_ids(candidates, ["key"], 3) != first)[0])
    return pd.DataFrame({"key": key, "v": np.arange(float(rows))})


def test_a_range_index_travels_as_row_positions_and_comes_back_as_its_values(dask_daemon):
    """Maps whose input has a RangeIndex (any start and step) store each row's position, as 16-bit gaps from
    the slice's previous row when they all fit, else 32 bits wide; the reducer gives back the values, as Dask's
    task shuffle would (an int64 index), also beside a map whose index is stored as it is."""
    frames = [pd.DataFrame({"key": np.arange(30) % 4, "v": np.arange(30.0)}, index=pd.RangeIndex(7, 97, 3)),
              _far_apart(70_000),
              pd.DataFrame({"key": np.arange(5) % 4, "v": np.arange(5.0)}, index=np.arange(5) * 10 + 1)]
    spec = _shuffle_tasks.ShuffleSpec("t", ["key"], 3, None, False, frames[0].iloc[:0], dask_daemon.dir)
    for maps in (1, 2, 3):  # the raw concatenation (every index a RangeIndex), mixed widths, a plain index
        outputs = [_shuffle_tasks.map_partition(f, spec, i) for i, f in enumerate(frames[:maps])]
        assert [o.schema[0] for o in outputs] == ["range<u2", "range<i4", "<i8"][:maps]
        assert [o.index_range for o in outputs] == [(7, 3), (0, 1), None][:maps]
        for p in range(3):
            got = _shuffle_tasks.reduce_partition(spec, p, *[copy.copy(o) for o in outputs])
            expected = pd.concat([f[_shuffle_tasks.partition_ids(f, ["key"], 3) == p] for f in frames[:maps]])
            expected.index = expected.index.astype(np.int64)
            pd.testing.assert_frame_equal(got, expected)
        del outputs
    assert store_objects(dask_daemon.dir) == []


def test_the_partitions_column_is_not_stored_and_comes_back_as_each_slices_partition(dask_daemon):
    """A ``_partitions`` column that holds each row's output partition is one value per slice: the maps do not
    store it and the reducer fills it in; a map whose column holds other values (out of range) stores it, and
    the reducer mixes both."""
    frames = [pd.DataFrame({"v": np.arange(30.0), "_partitions": (np.arange(30) % 3).astype(np.uint8)}),
              pd.DataFrame({"v": np.arange(6.0), "_partitions": np.array([0, 1, 2, 3, 4, 5], dtype=np.int64)})]
    spec = _shuffle_tasks.ShuffleSpec("t", "_partitions", 3, None, False, frames[0].iloc[:0], dask_daemon.dir)
    for maps in (1, 2):  # the raw concatenation, and the mixed one
        outputs = [_shuffle_tasks.map_partition(f, spec, i) for i, f in enumerate(frames[:maps])]
        assert [o.schema[2] for o in outputs] == ["part|u1", "<i8"][:maps]
        for p in range(3):
            got = _shuffle_tasks.reduce_partition(spec, p, *[copy.copy(o) for o in outputs])
            expected = pd.concat([f[f["_partitions"].to_numpy() % 3 == p] for f in frames[:maps]])
            expected.index = expected.index.astype(np.int64)
            if maps == 2:
                expected["_partitions"] = expected["_partitions"].astype(np.int64)
            pd.testing.assert_frame_equal(got, expected)
        del outputs
    assert store_objects(dask_daemon.dir) == []


def test_a_map_hands_its_slices_buffers_to_no_python_function_outside_depot(dask_daemon):
    """distributed's sampling profiler holds the frames it samples for a moment; a library's Python function
    that received a slice's buffer (NumPy's ``np.take`` wrapper did) would then keep it alive past the seal, a
    RuntimeWarning from ``ObjectWriter.seal``. A profile hook that keeps every frame outside Depot stands in
    for the profiler (Depot's own frames hold the buffer only while they create the writer)."""
    import os
    import sys
    import warnings
    import depot
    package = os.path.dirname(depot.__file__)
    frame_ = pd.DataFrame({"key": np.arange(5000) % 7, "v": np.arange(5000.0)}, index=pd.RangeIndex(3, 10003, 2))
    spec = _shuffle_tasks.ShuffleSpec("t", ["key"], 3, None, False, frame_.iloc[:0], dask_daemon.dir)
    kept = []

    def keep(frame, event, arg):
        if event == "call" and not frame.f_code.co_filename.startswith(package):
            kept.append(frame)

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        sys.setprofile(keep)
        try:
            output = _shuffle_tasks.map_partition(frame_, spec, 0)
        finally:
            sys.setprofile(None)
    assert kept  # the hook saw the library calls the map makes
    del kept, output
    assert store_objects(dask_daemon.dir) == []


def _error_of(call):
    """The message of what ``call`` raises; the exception and its traceback are dropped."""
    try:
        call()
    except Exception as e:
        return str(e)
    raise AssertionError("no exception")


def _left_after_running_maps(directory, prefix, timeout=30, quiet=0.5):
    """The objects with ``prefix`` left once maps still running when a compute failed had time to finish: none
    for ``quiet`` seconds on end (a map still running in Dask's thread pool may write its slices after a first
    look found none, and its output's finaliser deletes them after that)."""
    deadline = time.monotonic() + timeout
    empty_since = None
    while time.monotonic() < deadline:
        if store_objects(directory, prefix):
            empty_since = None
        elif empty_since is None:
            empty_since = time.monotonic()
        elif time.monotonic() - empty_since >= quiet:
            return []
        time.sleep(0.05)
    return store_objects(directory, prefix)
