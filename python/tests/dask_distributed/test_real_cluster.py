"""A cluster started as docs/DISTRIBUTED.md tells operators to: per node ``depot serve`` then
``dask worker SCHEDULER --worker-class depot.dask.distributed.Worker`` with ``DEPOT_DIR`` naming the node's
store, and ``dask scheduler --protocol depot``; every program a real subprocess. Two "nodes" on this machine,
each its own store directory and daemon, two workers per node."""

import os
import shutil
import signal
import uuid

import pytest

np = pytest.importorskip("numpy")
distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")

import depot  # noqa: E402
from depot.daemon import find_launcher  # noqa: E402
from depot.dask.distributed._compat import dask_command  # noqa: E402
from depot.dask.distributed.data import writer_of  # noqa: E402

from conftest import require_launcher  # noqa: E402
from dist_processes import SessionProcess, alive, session_members, wait_until  # noqa: E402

CAPACITY = "128m"
ARRAY = 1 << 20  # float64 elements: 8 MiB, far above the inline threshold
NODES = ("a", "b")


class Node:
    """One "node": its store directory, its ``depot serve`` daemon and its ``dask worker`` program."""

    def __init__(self, name, tmp_path):
        self.name = name
        self.dir = os.path.join("/dev/shm", "depot-test-" + uuid.uuid4().hex)
        self.spill = tmp_path / ("spill-" + name)
        self.tmp = tmp_path
        self.daemon = None
        self.workers = None

    def serve(self):
        self.daemon = SessionProcess(find_launcher() + ["serve", "--dir", self.dir, "--capacity", CAPACITY,
                                                        "--spill-dir", self.spill], self.tmp / ("serve-" + self.name))
        self.daemon.wait_for_output("depot: serving", timeout=60)

    def start_workers(self, scheduler_file):
        env = dict(os.environ, DEPOT_DIR=self.dir)
        env["PYTHONPATH"] = _package_path() + os.pathsep + env.get("PYTHONPATH", "")
        self.workers = SessionProcess(
            dask_command("worker") + ["--scheduler-file", scheduler_file, "--protocol", "depot",
                                      "--host", "127.0.0.1", "--nworkers", "2", "--nthreads", "1",
                                      "--name", "node-" + self.name, "--no-dashboard",
                                      "--worker-class", "depot.dask.distributed.Worker",
                                      "--preload", "depot.dask.distributed"],
            self.tmp / ("workers-" + self.name), env=env)

    def worker_objects(self):
        """Objects of worker results in the node's store, by state."""
        with depot.connect(self.dir) as c:
            return [i for i in c.list() if writer_of(i.id) is not None]

    def close(self):
        for p in (self.workers, self.daemon):
            if p is not None:
                p.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def _package_path():
    return os.path.dirname(os.path.dirname(os.path.abspath(depot.__file__)))


def _info(client):
    return client.run(lambda dask_worker: dask_worker.depot_info())


def _grew(before, after, worker, name):
    return after[worker][name] - before[worker][name]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    require_launcher()
    tmp = tmp_path_factory.mktemp("real-cluster")
    scheduler_file = str(tmp / "scheduler.json")
    nodes = {n: Node(n, tmp) for n in NODES}
    scheduler = None
    try:
        for node in nodes.values():
            node.serve()
        env = dict(os.environ)
        env["PYTHONPATH"] = _package_path() + os.pathsep + env.get("PYTHONPATH", "")
        scheduler = SessionProcess(dask_command("scheduler") + [
            "--protocol", "depot", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
            "--scheduler-file", scheduler_file, "--preload", "depot.dask.distributed"], tmp / "scheduler", env=env)
        scheduler.scheduler_file = scheduler_file
        wait_until(lambda: os.path.exists(scheduler_file) and os.path.getsize(scheduler_file) > 0,
                   "the scheduler file", timeout=60)
        for node in nodes.values():
            node.start_workers(scheduler_file)
        with distributed.Client(scheduler_file=scheduler_file, timeout=60) as client:
            client.wait_for_workers(4, timeout=90)
            yield nodes, client, scheduler
    finally:
        for node in nodes.values():
            node.close()
        if scheduler is not None:
            scheduler.close()


def _by_node(client):
    """{node name: [worker addresses]}, from each worker's name ("node-a-0")."""
    out = {}
    for address, w in client.scheduler_info()["workers"].items():
        out.setdefault(str(w["name"]).split("-")[1], []).append(address)
    return {n: sorted(ws) for n, ws in out.items()}


def test_workers_serve_their_nodes_store_with_the_daemons_capacity(cluster):
    nodes, client, _ = cluster
    by_node = _by_node(client)
    assert sorted(by_node) == list(NODES) and all(len(ws) == 2 for ws in by_node.values())
    info = _info(client)
    for name, workers in by_node.items():
        stores = {info[w]["store"] for w in workers}
        assert len(stores) == 1 and None not in stores, "both workers of node %s serve its store" % name
    assert info[by_node["a"][0]]["store"] != info[by_node["b"][0]]["store"]
    dirs = client.run(lambda dask_worker: dask_worker.depot_client.directory)
    capacities = client.run(lambda dask_worker: dask_worker.depot_client.stat().capacity_bytes)
    for name, workers in by_node.items():
        assert {dirs[w] for w in workers} == {nodes[name].dir}
        assert {capacities[w] for w in workers} == {128 << 20}, "the capacity is the daemon's"


def test_same_node_transfers_go_by_id_and_cross_node_over_tcp(cluster):
    nodes, client, _ = cluster
    by_node = _by_node(client)
    (a0, a1), (b0, _) = by_node["a"], by_node["b"]
    expected = float(ARRAY * (ARRAY - 1) // 2)
    before = _info(client)
    x = client.submit(np.arange, ARRAY, dtype=np.float64, workers=[a0], pure=False)
    assert client.submit(np.sum, x, workers=[a1], pure=False).result() == expected
    middle = _info(client)
    assert _grew(before, middle, a0, "sent_by_id") == 1 and _grew(before, middle, a1, "received_by_id") == 1
    assert _grew(before, middle, a0, "sent_remote") == 0
    assert client.submit(np.sum, x, workers=[b0], pure=False).result() == expected
    after = _info(client)
    # sent by a0 or a1 (both hold x now): as bytes over TCP
    assert sum(_grew(middle, after, w, "sent_remote") for w in (a0, a1)) == 1
    assert sum(_grew(middle, after, w, "sent_by_id") for w in (a0, a1)) == 0
    assert _grew(middle, after, b0, "received_by_id") == 0 and _grew(middle, after, b0, "stored") == 1


def test_results_equal_plain_distributed(cluster):
    _, client, _ = cluster
    x = da.random.RandomState(7).random((1500, 1500), chunks=(500, 500))
    y = (x + x.T).mean(axis=0) - x[::3].sum(axis=0)
    np.testing.assert_array_equal(client.compute(y).result(), y.compute(scheduler="sync"))


def test_a_killed_worker_leaves_its_node_store_what_others_hold(cluster):
    nodes, client, _ = cluster
    by_node = _by_node(client)
    a0, a1 = by_node["a"]
    held = client.submit(np.ones, ARRAY, workers=[a0], pure=False)
    alone = client.submit(np.ones, ARRAY, workers=[a0], pure=False)
    copy = client.submit(lambda v: v, held, workers=[a1], pure=False)  # a1 pins a0's object by id
    distributed.wait([held, alone, copy])
    pid = client.run(os.getpid, workers=[a0])[a0]
    written = [o for o in nodes["a"].worker_objects() if writer_of(o.id)[0] == pid]
    assert len(written) == 2
    os.kill(pid, signal.SIGKILL)
    # the other worker of the node deletes the dead writer's objects; the one it pins lives on until it drops it
    wait_until(lambda: not [o for o in nodes["a"].worker_objects()
                            if writer_of(o.id)[0] == pid and o.state == "sealed"], "the dead worker's objects to go")
    assert client.submit(np.sum, copy, workers=[a1], pure=False).result() == ARRAY
    del held, alone, copy


def test_a_worker_whose_node_runs_no_daemon_starts_none_and_passes_data_over_tcp(cluster, tmp_path):
    nodes, client, scheduler = cluster
    missing = os.path.join("/dev/shm", "depot-test-" + uuid.uuid4().hex)
    node = Node("c", tmp_path)
    node.dir = missing
    node.start_workers(scheduler.scheduler_file)
    try:
        node.workers.wait_for_output("unreachable", timeout=60)
        client.wait_for_workers(6, timeout=60)
        plain = _by_node(client)["c"]
        assert {w["store"] for a, w in _info(client).items() if a in plain} == {None}
        assert not os.path.exists(missing), "a worker started a store"
    finally:
        node.workers.terminate()
        node.close()
    wait_until(lambda: "c" not in _by_node(client), "the plain workers to leave")


def test_closing_the_cluster_leaves_both_stores_empty_and_no_process(tmp_path_factory, cluster):
    nodes, client, scheduler = cluster
    futures = client.map(np.full, [ARRAY] * 4, range(4), pure=False)
    distributed.wait(futures)
    assert sum(len(n.worker_objects()) for n in nodes.values()) >= 4
    del futures
    client.close()
    for node in nodes.values():
        assert node.workers.terminate() is not None  # SIGTERM: the nannies close their workers
    scheduler.terminate()
    for node in nodes.values():
        wait_until(lambda: not node.worker_objects(), "node %s's store to be empty" % node.name)
        with depot.connect(node.dir) as c:
            assert c.stat().used_bytes == 0
        node.daemon.terminate()
    for p in [scheduler] + [n.workers for n in nodes.values()] + [n.daemon for n in nodes.values()]:
        wait_until(lambda: not session_members(p.pid), "every process of %s to end" % p.cmd[:3])
        assert not alive(p.pid)
