"""depot.dask.distributed: same-node transfers by id, other-node transfers over TCP, lifetimes and faults.

Two stores in two directories act as two nodes. Runs where ``distributed`` is installed (Debian's
python3-distributed 2022.12.1 under /usr/bin/python3)."""

import os
import signal
import time
import warnings

import pytest

np = pytest.importorskip("numpy")
distributed = pytest.importorskip("distributed")

from conftest import Child, java_command  # noqa: E402

import depot  # noqa: E402
from depot.dask.distributed import LocalCluster, Nanny, VersionMismatch, Worker  # noqa: E402
from depot.dask.distributed.comm import DepotTCP  # noqa: E402
from depot.dask.distributed.data import writer_of  # noqa: E402

CAPACITY = 256 << 20
ARRAY = 1 << 20  # float64 elements: 8 MiB, well above the inline threshold


def _start_daemon(directory):
    child = Child(java_command("dev.depot.server.DaemonMain", "--dir", directory, "--capacity", CAPACITY))
    child.await_line("depot: serving", timeout=60)
    return child


def _stop_daemon(child):
    if child.proc.poll() is None:
        child.proc.send_signal(signal.SIGTERM)
        child.proc.wait(timeout=20)
    child.close()


@pytest.fixture
def node(store_dir):
    """A store with its daemon (one "node")."""
    child = _start_daemon(store_dir)
    try:
        yield store_dir
    finally:
        _stop_daemon(child)


@pytest.fixture
def second_node(tmp_path_factory):
    import shutil
    import uuid
    path = os.path.join("/dev/shm", "depot-test-" + uuid.uuid4().hex)
    child = _start_daemon(path)
    try:
        yield path
    finally:
        _stop_daemon(child)
        shutil.rmtree(path, ignore_errors=True)


def _worker_objects(directory):
    with depot.connect(directory) as c:
        return [i for i in c.list() if writer_of(i.id) is not None]


def _wait_until(predicate, what, timeout=30):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out after %s s waiting for %s" % (timeout, what))
        time.sleep(0.05)


def _counters(client):
    return client.run(lambda dask_worker: dask_worker.depot_info())


@pytest.fixture
def cluster(node):
    with LocalCluster(n_workers=2, threads_per_worker=1, depot_dir=node) as c, distributed.Client(c) as client:
        yield c, client


def test_same_store_transfer_moves_only_the_id(cluster):
    c, client = cluster
    a, b = sorted(client.scheduler_info()["workers"])
    x = client.submit(np.arange, ARRAY, dtype=np.float64, workers=[a], pure=False)
    total = client.submit(np.sum, x, workers=[b])
    assert total.result() == float(ARRAY * (ARRAY - 1) // 2)
    info = _counters(client)
    assert info[a]["sent_by_id"] == 1 and info[a]["sent_by_id_bytes"] >= ARRAY * 8
    assert info[b]["received_by_id"] == 1
    assert info[a]["store"] == info[b]["store"] is not None
    # The reader's copy is the writer's shared memory: both hold the same object, B only pins it.
    assert info[b]["stored"] == 0 and info[b]["shared_bytes"] >= ARRAY * 8


def test_results_equal_plain_dask(cluster):
    import dask
    import dask.array as da
    c, client = cluster
    x = da.random.RandomState(42).random((2000, 2000), chunks=(500, 500))
    y = (x + x.T).mean(axis=0) - x[::2].sum(axis=0)
    expected = y.compute(scheduler="sync")
    got = client.compute(y).result()
    np.testing.assert_array_equal(got, expected)
    assert dask.compute(y.sum(), scheduler="sync")[0] == pytest.approx(client.compute(y.sum()).result())


def test_released_keys_delete_their_objects(cluster):
    c, client = cluster
    x = client.submit(np.ones, ARRAY, pure=False)
    x.result()
    assert len(_worker_objects(c.depot_dir)) == 1
    del x
    _wait_until(lambda: not _worker_objects(c.depot_dir), "the released key's object to be deleted")


def test_small_results_stay_inline(cluster):
    c, client = cluster
    futures = client.map(lambda i: bytes(1000) + bytes([i % 256]), range(50))
    assert len(client.gather(futures)) == 50
    assert sum(i["stored"] for i in _counters(client).values()) == 0


def test_two_stores_act_as_two_nodes(node, second_node):
    workers = {
        "a": {"cls": Nanny, "options": {"depot_dir": node, "nthreads": 1, "protocol": "depot://",
                                        "host": "127.0.0.1"}},
        "b": {"cls": Nanny, "options": {"depot_dir": second_node, "nthreads": 1, "protocol": "depot://",
                                        "host": "127.0.0.1"}},
    }
    scheduler = {"cls": distributed.Scheduler, "options": {"protocol": "depot://", "host": "127.0.0.1",
                                                            "dashboard_address": None}}
    with distributed.SpecCluster(scheduler=scheduler, workers=workers) as c, distributed.Client(c) as client:
        info = _counters(client)
        by_name = {v["store"]: k for k, v in info.items()}
        assert len(by_name) == 2, "each worker serves its own store"
        addr = {client.scheduler_info()["workers"][w]["name"]: w for w in info}
        x = client.submit(np.arange, ARRAY, dtype=np.float64, workers=[addr["a"]], pure=False)
        total = client.submit(np.sum, x, workers=[addr["b"]])
        assert total.result() == float(ARRAY * (ARRAY - 1) // 2)
        info = _counters(client)
        assert info[addr["a"]]["sent_by_id"] == 0 and info[addr["a"]]["sent_remote"] >= 1
        assert info[addr["b"]]["received_by_id"] == 0
        assert info[addr["b"]]["stored"] == 1  # B keeps its copy in its own store


def test_killed_worker_objects_are_freed_and_readers_keep_theirs(cluster):
    c, client = cluster
    a, b = sorted(client.scheduler_info()["workers"])
    x = client.submit(np.arange, ARRAY, dtype=np.float64, workers=[a], pure=False)
    y = client.submit(lambda v: v, x, workers=[b])  # B now holds A's object by id
    y.result()
    pid_a = client.run(os.getpid, workers=[a])[a]
    os.kill(pid_a, signal.SIGKILL)
    # B still reads the object A made while it holds it.
    total = client.submit(np.sum, y, workers=[b])
    assert total.result() == float(ARRAY * (ARRAY - 1) // 2)
    del x, y, total
    _wait_until(lambda: not [o for o in _worker_objects(c.depot_dir) if writer_of(o.id)[0] == pid_a],
                "the dead worker's objects to be deleted")


def test_cluster_close_returns_the_store_to_its_baseline(node):
    with depot.connect(node) as c:
        baseline = c.stat().used
    with LocalCluster(n_workers=2, threads_per_worker=1, depot_dir=node) as cluster, \
            distributed.Client(cluster) as client:
        futures = [client.submit(np.ones, ARRAY, pure=False) for _ in range(4)]
        client.gather(futures)
        with depot.connect(node) as c:
            assert c.stat().used > baseline
    with depot.connect(node) as c:
        _wait_until(lambda: c.stat().used == baseline, "store used bytes to return to the baseline")


def test_unreachable_store_falls_back_to_tcp_with_a_warning():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        w = Worker.__new__(Worker)
        # Only the store part of __init__: a directory nobody can create.
        from depot.dask.distributed import worker as worker_module
        try:
            worker_module._connect("/proc/depot-no-such-dir", None)
        except Exception as e:
            message = str(e)
        else:  # pragma: no cover
            message = ""
    assert message, "connecting to an impossible directory must fail"
    del w, caught


def test_version_mismatch_is_a_clear_error():
    local = DepotTCP.handshake_info()
    remote = dict(local, **{"depot-version": "0.0.0-other", "address": "depot://10.0.0.2:1"})
    with pytest.raises(VersionMismatch, match="0.0.0-other"):
        DepotTCP.handshake_configuration(local, remote)
    assert DepotTCP.handshake_configuration(local, dict(local))
