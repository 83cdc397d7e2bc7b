"""depot.dask.distributed: same-node transfers by id, other-node transfers over TCP, lifetimes and faults.

Two stores in two directories act as two nodes. Runs where ``distributed`` is installed (Debian's
python3-distributed 2022.12.1 under /usr/bin/python3)."""

import os
import shutil
import signal
import uuid
import time

import pytest

np = pytest.importorskip("numpy")
distributed = pytest.importorskip("distributed")

from conftest import Child, java_command  # noqa: E402

import depot  # noqa: E402
from depot.dask.distributed import LocalCluster, Nanny, VersionMismatch, Worker  # noqa: E402
from depot.dask.distributed.comm import DepotTCP, handshake_entries  # noqa: E402
from depot.dask.distributed.data import writer_of  # noqa: E402

CAPACITY = 256 << 20
ARRAY = 1 << 20  # float64 elements: 8 MiB, well above the inline threshold


def _start_daemon(directory, *options, capacity=CAPACITY):
    child = Child(java_command("dev.depot.server.DaemonMain", "--dir", directory, "--capacity", capacity, *options))
    child.await_line("depot: serving", timeout=60)
    return child


def _stop_daemon(child):
    if child.proc.poll() is None:
        child.proc.send_signal(signal.SIGTERM)
        child.proc.wait(timeout=20)
    child.close()


def _node():
    """A store with its daemon (one "node"), removed afterwards."""
    path = os.path.join("/dev/shm", "depot-test-" + uuid.uuid4().hex)
    child = _start_daemon(path)
    try:
        yield path
    finally:
        _stop_daemon(child)
        shutil.rmtree(path, ignore_errors=True)


node = pytest.fixture(scope="module")(_node)
second_node = pytest.fixture(scope="module")(_node)


def _worker_objects(directory, state="sealed"):
    """Objects of worker results in the store (sealed ones: a deleted one still pinned by a reader that has
    not been collected yet is "delete_pending")."""
    with depot.connect(directory) as c:
        return [i for i in c.list() if writer_of(i.id) is not None and (state is None or i.state == state)]


def _wait_until(predicate, what, timeout=30):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out after %s s waiting for %s" % (timeout, what))
        time.sleep(0.05)


def _counters(client):
    return client.run(lambda dask_worker: dask_worker.depot_info())


@pytest.fixture(scope="module")
def cluster(node):
    with LocalCluster(n_workers=2, threads_per_worker=1, depot_dir=node) as c, distributed.Client(c) as client:
        yield c, client


def test_same_store_transfer_moves_only_the_id(cluster):
    c, client = cluster
    a, b = sorted(client.scheduler_info()["workers"])
    before = _counters(client)
    x = client.submit(np.arange, ARRAY, dtype=np.float64, workers=[a], pure=False)
    total = client.submit(np.sum, x, workers=[b])
    assert total.result() == float(ARRAY * (ARRAY - 1) // 2)
    after = _counters(client)
    def grew(w, name):
        return after[w][name] - before[w][name]
    assert grew(a, "sent_by_id") == 1 and grew(a, "sent_by_id_bytes") == ARRAY * 8
    assert grew(b, "received_by_id") == 1 and grew(b, "received_by_id_bytes") == ARRAY * 8
    assert after[a]["store"] == after[b]["store"] is not None
    # The reader holds the writer's shared memory: it stored nothing of its own, and no bytes went over TCP.
    assert grew(b, "stored") == 0 and grew(a, "sent_remote") == 0


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
    before = sum(i["stored"] for i in _counters(client).values())
    futures = client.map(lambda i: bytes(1000) + bytes([i % 256]), range(50))
    assert len(client.gather(futures)) == 50
    assert sum(i["stored"] for i in _counters(client).values()) == before


def _spec(directory):
    return {"cls": Nanny, "options": {"depot_dir": directory, "nthreads": 1, "protocol": "depot://",
                                      "host": "127.0.0.1"}}


class _spec_cluster:
    """A SpecCluster (workers given one by one) and a client of it."""

    def __init__(self, workers):
        scheduler = {"cls": distributed.Scheduler,
                     "options": {"protocol": "depot://", "host": "127.0.0.1", "dashboard_address": None}}
        self.cluster = distributed.SpecCluster(scheduler=scheduler, workers=workers)

    def __enter__(self):
        self.client = distributed.Client(self.cluster)
        return self.cluster, self.client

    def __exit__(self, *exc):
        self.client.close()
        self.cluster.close()


def _make_array(_):
    return np.ones(ARRAY)


def test_two_stores_act_as_two_nodes(node, second_node):
    with _spec_cluster({"a": _spec(node), "b": _spec(second_node)}) as (c, client):
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


def test_cluster_close_returns_the_store_to_its_baseline(second_node):
    with depot.connect(second_node) as c:
        baseline = c.stat().used_bytes
    with LocalCluster(n_workers=2, threads_per_worker=1, depot_dir=second_node) as cluster, \
            distributed.Client(cluster) as client:
        futures = [client.submit(np.ones, ARRAY, pure=False) for _ in range(4)]
        client.gather(futures)
        with depot.connect(second_node) as c:
            assert c.stat().used_bytes > baseline
    with depot.connect(second_node) as c:
        _wait_until(lambda: c.stat().used_bytes == baseline, "store used bytes to return to the baseline")


def test_unreachable_store_falls_back_to_tcp(node):
    workers = {"ok": _spec(node), "lost": _spec("/proc/depot-no-such-store")}
    with _spec_cluster(workers) as (c, client):
        info = _counters(client)
        stores = {client.scheduler_info()["workers"][w]["name"]: v["store"] for w, v in info.items()}
        assert stores["lost"] is None and stores["ok"] is not None
        futures = client.map(_make_array, range(4), pure=False)
        assert sum(client.gather(client.map(np.sum, futures))) == 4 * ARRAY


def test_version_mismatch_is_a_clear_error():
    # the keys every release of Dask's handshake carries, and the backend's own
    local = dict({"compression": None, "python": (3, 11, 2), "pickle-protocol": 5}, **handshake_entries())
    remote = dict(local, **{"depot-version": "0.0.0-other", "address": "depot://10.0.0.2:1"})
    with pytest.raises(VersionMismatch, match="0.0.0-other"):
        DepotTCP.handshake_configuration(local, remote)
    assert DepotTCP.handshake_configuration(local, dict(local))


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


def test_daemon_killed_and_restarted_workers_carry_on():
    path = os.path.join("/dev/shm", "depot-test-" + uuid.uuid4().hex)
    daemon = _start_daemon(path)
    try:
        with LocalCluster(n_workers=2, threads_per_worker=1, depot_dir=path) as c, distributed.Client(c) as client:
            a, b = sorted(client.scheduler_info()["workers"])
            x = client.submit(np.arange, ARRAY, dtype=np.float64, workers=[a], pure=False)
            x.result()
            daemon.proc.kill()
            daemon.close()
            daemon = _start_daemon(path)
            # What was stored survives the daemon; new results are stored through the new one.
            total = client.submit(np.sum, x, workers=[b])
            assert total.result() == float(ARRAY * (ARRAY - 1) // 2)
            y = client.submit(np.ones, ARRAY, workers=[a], pure=False)
            assert client.submit(np.sum, y, workers=[b]).result() == ARRAY
            assert _counters(client)[b]["received_by_id"] >= 2
    finally:
        _stop_daemon(daemon)
        shutil.rmtree(path, ignore_errors=True)


def test_results_beyond_the_store_spill_and_are_never_lost(tmp_path):
    path = os.path.join("/dev/shm", "depot-test-" + uuid.uuid4().hex)
    daemon = _start_daemon(path, "--spill-dir", tmp_path / "spill", capacity=48 << 20)
    try:
        with LocalCluster(n_workers=2, threads_per_worker=1, depot_dir=path) as c, distributed.Client(c) as client:
            # 12 results of 8 MiB, all held, in a 48 MiB store: the oldest go to the spill directory.
            parts = [client.submit(np.full, ARRAY, float(i), pure=False) for i in range(12)]
            distributed.wait(parts)
            with depot.connect(path) as store:
                states = [o.state for o in store.list()]
            assert "spilled" in states, (states, [(v["stored"], v.get("store_full"))
                                                  for v in _counters(client).values()])
            sums = client.gather([client.submit(np.sum, p) for p in parts])
            assert sums == [float(i * ARRAY) for i in range(12)]
    finally:
        _stop_daemon(daemon)
        shutil.rmtree(path, ignore_errors=True)
