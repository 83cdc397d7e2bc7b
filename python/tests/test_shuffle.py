"""depot.shuffle: maps and reducers in this and other processes (Python and Java), failures, cleanup."""

import os
import random
import sys
import time

import pytest

np = pytest.importorskip("numpy")

import depot  # noqa: E402
from depot import _atomics as atomics  # noqa: E402
from depot._layout import StoreHeaderDescriptor as H  # noqa: E402
from conftest import REPO, Child, class_path, java_executable, python_child  # noqa: E402

from depot.shuffle import (AbandonedShuffle, MapFailedError, MapTimeoutError, Shuffle, find_abandoned,  # noqa: E402
                           partition_array, sweep_abandoned)


@pytest.fixture
def daemon(shared_daemon):
    """The module's one daemon (conftest's shared_daemon); each test uses its own shuffle ids and leaves the
    store empty."""
    return shared_daemon


@pytest.fixture
def client(daemon):
    c = depot.connect(daemon.dir)
    try:
        yield c
    finally:
        c.close()


def await_objects(client, count):
    """Waits until the store holds ``count`` objects: the daemon aborts a dead writer's unsealed objects, and
    completes a delete that found the object pinned, within about a second."""
    deadline = time.monotonic() + 10
    while len(client.list()) != count:
        assert time.monotonic() < deadline, "the store holds %s, not %d objects" % (client.list(), count)
        time.sleep(0.05)


def await_empty(client):
    await_objects(client, 0)


def random_sizes(rnd, partitions):
    return [0 if rnd.random() < 0.25 else rnd.randrange(1, 5000) for _ in range(partitions)]


def values(m, p, n):
    return np.arange(n, dtype=np.int64) + m * 1_000_000 + p * 10_000


@pytest.mark.parametrize("layout", ["per_map", "per_slice"])
def test_every_reducer_gets_every_maps_slice_with_random_sizes_including_empty(client, layout):
    rnd = random.Random(5)
    maps, partitions = 4, 6
    sizes = [random_sizes(rnd, partitions) for _ in range(maps)]
    with Shuffle.create(client, "p1", maps, partitions, layout=layout, dtype="<i8") as s:
        for m in range(maps):
            s.write_map(m, [values(m, p, sizes[m][p]) for p in range(partitions)])
        for p in range(partitions):
            with s.reader(p, timeout=5) as r:
                arrays = r.arrays()
                assert len(arrays) == maps
                for m in range(maps):
                    np.testing.assert_array_equal(arrays[m], values(m, p, sizes[m][p]))
                assert r.nbytes == 8 * sum(sizes[m][p] for m in range(maps))
                assert [len(v) for v in r.slices()] == [8 * sizes[m][p] for m in range(maps)]
            del arrays
    client.flush()
    assert client.list() == [], "closing the shuffle deletes every object"


def test_a_writer_fills_shared_memory_in_place(client):
    with Shuffle.create(client, "p2", 1, 2, dtype="<f8") as s:
        with s.writer(0, [16, 0]) as w:
            w.array(0)[:] = [1.5, -0.0]
            w.commit()
        with s.reader(0, timeout=5) as r:
            got = r.array()
        assert got.tolist() == [1.5, -0.0] and np.signbit(got[1])


def test_readers_fail_naming_a_map_that_failed(client):
    with Shuffle.create(client, "p3", 3, 1) as s:
        s.write_map(0, [b"abc"])
        with s.writer(1, [10]) as w:
            w.fail("the input was truncated")
        with pytest.raises(MapFailedError, match="map 1 .*the input was truncated") as e:
            s.reader(0, timeout=5)
        assert e.value.map == 1


def test_a_writer_left_without_commit_fails_its_map(client):
    with Shuffle.create(client, "p4", 1, 1) as s:
        with s.writer(0, [10]):
            pass
        with pytest.raises(MapFailedError, match="closed without commit"):
            s.reader(0, timeout=5)
    assert client.list() == []


def test_a_map_that_has_not_started_times_out_with_its_name(client):
    with Shuffle.create(client, "p5", 2, 1) as s:
        s.write_map(0, [b"x"])
        with pytest.raises(MapTimeoutError, match="map 1 .*has not started") as e:
            s.reader(0, timeout=0.3)
        assert e.value.map == 1


HANGING_MAP = """
import sys, time, depot
from depot.shuffle import Shuffle
client = depot.connect(sys.argv[1])
s = Shuffle.open(client, sys.argv[2], timeout=10)
w = s.writer(1, [100])
print("opened", flush=True)
time.sleep(600)
"""


def test_readers_fail_naming_a_map_whose_process_was_killed(client, daemon):
    with Shuffle.create(client, "p6", 2, 1) as s:
        s.write_map(0, [b"fine"])
        with python_child(HANGING_MAP, daemon.dir, "p6") as child:
            child.await_line("opened")
            pid = child.proc.pid
            child.kill()
            with pytest.raises(MapFailedError, match=r"map 1 .*died \(pid %d exited\)" % pid):
                s.reader(0, timeout=30)


HOLDING_REDUCER = """
import sys, time, depot
from depot.shuffle import Shuffle
client = depot.connect(sys.argv[1])
s = Shuffle.open(client, sys.argv[2], timeout=10)
r = s.reader(0, timeout=30)
arrays = r.arrays()
print("holding", sum(a.nbytes for a in arrays), flush=True)
time.sleep(600)
"""


def test_a_reducer_killed_holding_its_slices_leaves_nothing_once_the_shuffle_closes(client, daemon):
    with Shuffle.create(client, "p7", 2, 2, dtype="<i8") as s:
        for m in range(2):
            s.write_map(m, [values(m, 0, 300), values(m, 1, 0)])
        with python_child(HOLDING_REDUCER, daemon.dir, "p7") as child:
            assert child.await_line("holding") == "holding %d" % (2 * 300 * 8)
            child.kill()
        with s.reader(0, timeout=5) as r:  # another reducer reads the partition the dead one held
            np.testing.assert_array_equal(r.array(), np.concatenate([values(0, 0, 300), values(1, 0, 300)]))
    await_empty(client)  # the daemon returns the dead reducer's pins within about a second


DYING_COORDINATOR = """
import sys, time, depot
from depot.shuffle import Shuffle
client = depot.connect(sys.argv[1])
s = Shuffle.create(client, sys.argv[2], 2, 1)
s.write_map(0, [b"abc"])
print("created", flush=True)
time.sleep(600)
"""


def test_a_sweep_deletes_the_shuffle_of_a_creator_that_died_and_keeps_live_ones(client, daemon):
    with python_child(DYING_COORDINATOR, daemon.dir, "p8") as child:
        child.await_line("created")
        with Shuffle.create(client, "p8-alive", 1, 1) as alive:
            alive.write_map(0, [b"x"])
            alive_ids = set(alive._ids.all(1, 1))
            assert sweep_abandoned(client) == [], "its creator is alive"
            pid = child.proc.pid
            child.kill()
            dead = [i for i in client.list() if i.id not in alive_ids]
            assert find_abandoned(client) == [AbandonedShuffle("p8", pid, len(dead), sum(i.data_size for i in dead))]
            assert len(client.list()) == len(dead) + 4, "finding deletes nothing"
            assert [a.id for a in sweep_abandoned(client)] == ["p8"]
            await_objects(client, 4)  # only the live shuffle's manifest, owner, data and status
            assert sweep_abandoned(client) == []
            with alive.reader(0, timeout=5) as r:
                assert [bytes(v) for v in r.slices()] == [b"x"]
    await_empty(client)


def test_a_dead_creators_shuffle_stays_while_a_map_is_being_written(client, daemon):
    with python_child(DYING_COORDINATOR, daemon.dir, "p9") as creator, \
            python_child(HANGING_MAP, daemon.dir, "p9") as writer:
        creator.await_line("created")
        writer.await_line("opened")
        creator.kill()
        assert sweep_abandoned(client) == [], "map 1 is still being written"
        writer.kill()
    assert [a.id for a in sweep_abandoned(client)] == ["p9"]
    await_empty(client)


def test_creating_a_shuffle_sweeps_the_abandoned_ones(client, daemon):
    with python_child(DYING_COORDINATOR, daemon.dir, "p10") as child:
        child.await_line("created")
        child.kill()
    with Shuffle.create(client, "p10-next", 1, 1):
        await_objects(client, 1)  # only the new manifest
    await_empty(client)


def test_partition_array_splits_by_splitters_in_numpys_order_with_nan_last():
    a = np.array([3.0, np.nan, -0.0, 0.0, 1.0, -5.0, 3.0, np.inf])
    parts = partition_array(a, np.array([0.0, 3.0]))
    assert parts[0].tolist() == [-5.0]
    assert parts[1].tolist() == [-0.0, 0.0, 1.0]
    assert parts[2][[0, 2, 3]].tolist() == [3.0, 3.0, np.inf] and np.isnan(parts[2][1]), "input order kept"


def kept_objects(client):
    return atomics.get_long_volatile(client._mapping.base + H.KEPT_OBJECTS_OFFSET)


def test_frames_go_through_the_shuffle(client):
    pd = pytest.importorskip("pandas")
    kept = kept_objects(client)
    with Shuffle.create(client, "p7", 2, 2, layout="per_slice") as s:
        for m in range(2):
            df = pd.DataFrame({"key": [m, m + 10, m + 20], "value": [0.5 * m, 1.5, 2.5]})
            s.write_frames(m, [df[df.key < 10], df[df.key >= 10]])
        assert kept_objects(client) == kept + 1 + 2 * (1 + 2 + 1), \
            "the manifest, and each map's owner, slices and status are kept (spilled under pressure, never evicted)"
        with s.reader(1, timeout=5) as r:
            got = pd.concat(r.frames(), ignore_index=True)
        assert got.key.tolist() == [10, 20, 11, 21]


# ---- across languages -----------------------------------------------------------------------------------------

def shuffle_java(*args, main="CrossLanguageMain"):
    java = java_executable()
    cp = class_path()
    tests = os.path.join(REPO, "depot-shuffle", "target")
    extra = [os.path.join(tests, "classes"), os.path.join(tests, "test-classes")]
    if java is None or cp is None or not os.path.isfile(
            os.path.join(extra[1], "dev", "depot", "shuffle", "CrossLanguageMain.class")):
        pytest.skip("depot-shuffle is not built: mvn -pl depot-shuffle -am test-compile")
    return Child([java, "--enable-native-access=ALL-UNNAMED", "-Xmx128m", "-cp",
                  os.pathsep.join([cp] + extra), "dev.depot.shuffle." + main] + [str(a) for a in args])


@pytest.mark.parametrize("layout", ["PER_MAP", "PER_SLICE"])
def test_python_reads_what_java_maps_wrote(client, daemon, layout, tmp_path):
    done = tmp_path / "done"
    sid = "j1" + layout
    with shuffle_java("create", daemon.dir, sid, 2, 3, layout, done) as owner:
        owner.await_line("created", timeout=60)
        for m in range(2):
            with shuffle_java("write", daemon.dir, sid, m) as w:
                w.await_line("committed", timeout=60)
        s = Shuffle.open(client, sid, timeout=5)
        assert (s.maps, s.partitions, s.dtype, s.layout) == (2, 3, "<f8", layout.lower())
        with s.reader(2, timeout=10) as r:
            got = [a.tolist() for a in r.arrays()]
        assert got == [[20.0, 21.0, 22.0], [1020.0, 1021.0, 1022.0]]
        done.touch()
        owner.await_line("closed", timeout=60)
    client.flush()
    assert client.list() == [], "the Java owner deleted the shuffle"


def test_java_reads_what_python_maps_wrote(client, daemon):
    with Shuffle.create(client, "j2", 2, 2, dtype="<f8") as s:
        for m in range(2):
            s.write_map(m, [np.array([m + 0.25]), np.arange(3, dtype=np.float64) + 100 * m])
        with shuffle_java("read", daemon.dir, "j2", 1) as r:
            assert r.await_line("partition", timeout=60) == "partition 1"
            assert r.await_line("values", timeout=10) == "values 0.0 1.0 2.0"
            assert r.await_line("values", timeout=10) == "values 100.0 101.0 102.0"


def test_each_language_sweeps_the_shuffle_of_a_dead_creator_in_the_other(client, daemon):
    with shuffle_java(daemon.dir, "j3", 2, 2, main="CoordinatorMain") as creator:
        creator.await_line("created", timeout=60)
        creator.kill()
    assert [a.id for a in sweep_abandoned(client)] == ["j3"], "Python sweeps what a Java creator left"
    await_empty(client)
    with python_child(DYING_COORDINATOR, daemon.dir, "j4") as child:
        child.await_line("created")
        child.kill()
    with shuffle_java("sweep", daemon.dir) as sweeper:
        assert sweeper.await_line("swept", timeout=60) == "swept j4", "Java sweeps what a Python creator left"
    await_empty(client)
