"""depot.dask.Scheduler: results equal those of Dask's synchronous scheduler; errors, killed workers, Ctrl-C;
intermediate results deleted when no task needs them; nothing left in the store after close."""

import os
import signal
import sys
import threading
import time

import pytest

from dask_fixtures import clean_store, dask_daemon, scheduler, store_objects  # noqa: F401

import dask  # noqa: E402
import numpy as np  # noqa: E402

import depot.dask  # noqa: E402
from conftest import python_child  # noqa: E402


def test_array_results_equal_the_synchronous_schedulers(scheduler, clean_store):
    import dask.array as da
    x = da.random.RandomState(42).random_sample((600, 400), chunks=(150, 100))
    y = ((x + x.T[:400, :600].T) * 2).mean(axis=0) + (x @ x.T).sum()
    got = y.compute(scheduler=scheduler)
    np.testing.assert_allclose(got, y.compute(scheduler="sync"))
    assert isinstance(got, np.ndarray)


def test_large_results_are_read_only_shared_memory(scheduler, clean_store):
    import dask.array as da
    x = da.ones((512, 512), chunks=(256, 512)) * 3
    got = x.compute(scheduler=scheduler)
    assert got.shape == (512, 512) and float(got.sum()) == 3 * 512 * 512
    del got


def test_dataframe_results_equal_the_synchronous_schedulers(scheduler, clean_store):
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe", reason="dask.dataframe needs pandas")
    rng = np.random.default_rng(1)
    pdf = pd.DataFrame({"k": rng.integers(0, 7, 20000), "v": rng.random(20000), "w": np.arange(20000)})
    df = dd.from_pandas(pdf, npartitions=4)
    agg = df.groupby("k").v.sum()
    expected = agg.compute(scheduler="sync")
    got = agg.compute(scheduler=scheduler)
    pd.testing.assert_series_equal(got.sort_index(), expected.sort_index())
    filtered = df[df.v > 0.5].w.compute(scheduler=scheduler)
    pd.testing.assert_series_equal(filtered, df[df.v > 0.5].w.compute(scheduler="sync"))


def test_delayed_graph_with_small_and_large_results(scheduler, clean_store):
    @dask.delayed
    def make(i, n):
        return np.arange(n, dtype=np.float64) * i

    @dask.delayed
    def combine(a, b):
        return {"sum": float(a.sum() + b.sum()), "n": len(a) + len(b), "label": "x" * 10}

    parts = [make(i, 100 if i % 2 else 100000) for i in range(6)]
    out = [combine(parts[i], parts[i + 1]) for i in range(0, 6, 2)]
    got = dask.compute(*out, scheduler=scheduler)
    assert got == dask.compute(*out, scheduler="sync")


def test_usable_as_the_configured_scheduler(scheduler, clean_store):
    import dask.array as da
    x = da.arange(1000, chunks=100)
    with dask.config.set(scheduler=scheduler):
        assert int(x.sum().compute()) == 499500


def test_raw_graph_is_culled_to_the_keys_asked(scheduler, clean_store):
    def boom():
        raise AssertionError("a key nobody asked for was computed")

    dsk = {"a": 1, "b": (lambda v: v + 1, "a"), "unused": (boom,)}
    assert scheduler(dsk, ["b"]) == (2,)
    assert scheduler(dsk, "b") == 2


def test_persist_returns_real_objects_any_scheduler_can_compute(scheduler, clean_store):
    import dask.array as da
    x = (da.ones((400, 400), chunks=100) * 2).persist(scheduler=scheduler)
    assert float(x.sum().compute(scheduler="sync")) == 2 * 400 * 400
    assert float(x.sum().compute(scheduler=scheduler)) == 2 * 400 * 400
    del x


def test_intermediate_results_are_deleted_when_no_task_needs_them(scheduler, clean_store):
    token = scheduler._pool.token
    live = []

    class Watch(dask.callbacks.Callback):
        def _posttask(self, key, result, dsk, state, id):
            live.append(len(store_objects(clean_store, token)))

    @dask.delayed
    def step(prev, i):
        return (prev if prev is not None else np.zeros(1 << 16)) + i

    v = None
    for i in range(12):
        v = step(v, i)
    with Watch():
        got = v.compute(scheduler=scheduler)
    assert float(got[0]) == sum(range(12))
    # a chain holds its last result and the one being made, never all twelve
    assert max(live) <= 3, live
    del got


def test_task_error_is_raised_with_the_workers_traceback(scheduler, clean_store):
    def fails_here(x):
        return x / 0

    @dask.delayed
    def big(i):
        return np.ones(100000) * i

    graph = [dask.delayed(fails_here)(1)] + [big(i) for i in range(4)]
    with pytest.raises(ZeroDivisionError) as info:
        dask.compute(*graph, scheduler=scheduler)
    cause = info.value.__cause__
    assert isinstance(cause, depot.dask.RemoteTraceback)
    assert "fails_here" in cause.text and "depot.dask worker" in cause.text
    # still usable afterwards
    assert dask.compute(dask.delayed(sum)([1, 2]), scheduler=scheduler) == (3,)
    time.sleep(0.2)  # results of the other tasks, still running, are deleted as they arrive


def test_killed_worker_fails_the_compute_naming_the_task_and_is_replaced(scheduler, clean_store, tmp_path):
    pidfile = tmp_path / "pid"
    before = scheduler.workers

    def victim(path):
        with open(path, "w") as f:
            f.write(str(os.getpid()))
        time.sleep(60)

    def killer():
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if pidfile.exists() and pidfile.read_text():
                os.kill(int(pidfile.read_text()), signal.SIGKILL)
                return
            time.sleep(0.01)

    t = threading.Thread(target=killer)
    t.start()
    try:
        with pytest.raises(depot.dask.WorkerDiedError) as info:
            dask.compute(dask.delayed(victim)(str(pidfile), dask_key_name="the-victim"), scheduler=scheduler)
    finally:
        t.join()
    assert "the-victim" in str(info.value) and "signal 9" in str(info.value)
    after = scheduler.workers
    assert len(after) == 2 and int(pidfile.read_text()) in before and int(pidfile.read_text()) not in after
    assert dask.compute(dask.delayed(sum)([1, 2, 3]), scheduler=scheduler) == (6,)



def test_a_worker_that_hangs_up_without_exiting_is_killed_and_its_task_fails_naming_it(scheduler, clean_store):
    before = scheduler.workers

    def hang_up():
        import socket
        import sys
        # the worker's end of its pipe to the scheduler (``_worker.run``'s first argument), shut down: the
        # scheduler sees the pipe close while the process lives on, stuck in this task
        socket.socket(fileno=os.dup(int(sys.argv[1]))).shutdown(socket.SHUT_RDWR)
        time.sleep(600)

    with pytest.raises(depot.dask.WorkerDiedError) as info:
        dask.compute(dask.delayed(hang_up)(dask_key_name="the-hang-up"), scheduler=scheduler)
    assert "the-hang-up" in str(info.value) and "signal 9" in str(info.value)
    after = scheduler.workers
    assert len(after) == 2 and len(set(before) - set(after)) == 1
    assert dask.compute(dask.delayed(sum)([1, 2, 3]), scheduler=scheduler) == (6,)


def test_a_worker_that_dies_while_a_process_it_forked_keeps_its_pipe_open_is_noticed_by_its_pidfd(scheduler,
                                                                                                  clean_store,
                                                                                                  tmp_path):
    pidfile = tmp_path / "forked"

    def fork_then_die(path):
        child = os.fork()
        if child == 0:  # inherits the worker's end of its pipe, and keeps it open
            time.sleep(120)
            os._exit(0)
        with open(path, "w") as f:
            f.write(str(child))
        os.kill(os.getpid(), signal.SIGKILL)

    try:
        with pytest.raises(depot.dask.WorkerDiedError) as info:
            dask.compute(dask.delayed(fork_then_die)(str(pidfile), dask_key_name="the-forker"), scheduler=scheduler)
        assert "the-forker" in str(info.value) and "signal 9" in str(info.value)
        assert dask.compute(dask.delayed(sum)([1, 2, 3]), scheduler=scheduler) == (6,)
    finally:
        if pidfile.exists():
            forked = int(pidfile.read_text())
            try:
                os.kill(forked, signal.SIGKILL)
            except ProcessLookupError:
                pass
            deadline = time.monotonic() + 30  # reparented (to init or a subreaper), which reaps it
            while time.monotonic() < deadline:
                try:
                    with open("/proc/%d/status" % forked) as f:
                        if "zombie" in f.read().lower():
                            break
                except FileNotFoundError:
                    break
                time.sleep(0.01)


def test_computes_from_several_threads_at_once_share_the_workers_and_each_gets_its_own_results(scheduler,
                                                                                                clean_store):
    # each worker's receiving thread completes the futures of every compute's batches it ran
    @dask.delayed(pure=True)
    def part(seed, i):
        time.sleep(0.01)
        return np.full(20000, float(seed * 100 + i))  # above inline_bytes: held by the worker, passed by id

    @dask.delayed(pure=True)
    def total(parts):
        return float(sum(p.sum() for p in parts))

    graphs = {seed: total([part(seed, i) for i in range(12)]) for seed in range(4)}
    got, errors = {}, []

    def run(seed):
        try:
            got[seed] = dask.compute(graphs[seed], scheduler=scheduler)[0]
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=run, args=(seed,)) for seed in graphs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors and not any(t.is_alive() for t in threads)
    assert got == {seed: dask.compute(g, scheduler="sync")[0] for seed, g in graphs.items()}


def test_a_worker_killed_between_computes_is_replaced_before_the_next_one(scheduler, clean_store):
    # no compute runs: the worker's receiving thread notices the death
    victim = scheduler.workers[0]
    os.kill(victim, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while victim in scheduler.workers and time.monotonic() < deadline:
        time.sleep(0.01)
    assert victim not in scheduler.workers and len(scheduler.workers) == 2
    parts = [dask.delayed(lambda i: np.full(20000, float(i)), pure=True)(i) for i in range(8)]
    assert dask.compute(dask.delayed(lambda xs: float(sum(x.sum() for x in xs)))(parts),
                        scheduler=scheduler)[0] == 20000.0 * sum(range(8))

CTRL_C = r"""
import os, signal, sys, time, dask, numpy as np, depot, depot.dask
# A shell starts a background job with SIGINT ignored, and Python then installs no KeyboardInterrupt handler:
# a suite run as `bin/test &` would time out here. The caller plays an interactive user, so it takes Ctrl-C.
signal.signal(signal.SIGINT, signal.default_int_handler)
from depot.dask._objects import shared_client
s = depot.dask.Scheduler(workers=1, dir=sys.argv[1])
print("workers", *s.workers, flush=True)
@dask.delayed
def slow(i):
    time.sleep(60)
    return np.ones(100000)
@dask.delayed
def fast(i):
    return np.ones(100000) * i
try:
    dask.compute(*[fast(i) for i in range(4)], *[slow(i) for i in range(4)], scheduler=s)
except KeyboardInterrupt:
    left = [i for i in shared_client(sys.argv[1]).list() if bytes(i.id).startswith(s._pool.token)]
    print("interrupted", len(left), "replaced", len(set(s.workers) & set(%s)) == 0, flush=True)
s.close()
print("closed", flush=True)
"""


def test_ctrl_c_cancels_running_tasks_and_cleans_up(dask_daemon):
    code = CTRL_C.replace("%s", "[int(w) for w in open(sys.argv[2]).read().split()]")
    import tempfile
    with tempfile.NamedTemporaryFile("w+") as pids:
        child = python_child(code, dask_daemon.dir, pids.name)
        with child:
            line = child.await_line("workers", timeout=120)
            pids.write(" ".join(line.split()[1:]))
            pids.flush()
            time.sleep(1.5)  # the slow tasks are running
            child.proc.send_signal(signal.SIGINT)
            assert child.await_line("interrupted", timeout=60) == "interrupted 0 replaced True"
            child.await_line("closed", timeout=60)
            assert child.proc.wait(timeout=30) == 0
        for pid in line.split()[1:]:
            assert not os.path.exists("/proc/%s" % pid) or "zombie" in open("/proc/%s/status" % pid).read().lower()


def test_close_stops_workers_and_deletes_every_object(dask_daemon):
    import dask.array as da
    s = depot.dask.Scheduler(workers=1, dir=dask_daemon.dir, inline_bytes=1024)
    pids = s.workers
    x = da.ones((256, 256), chunks=64)
    kept = (x * 2).compute(scheduler=s)
    s.close()
    assert float(kept.sum()) == 2 * 256 * 256  # what the caller holds stays readable
    del kept
    assert store_objects(dask_daemon.dir, s._pool.token) == []
    for pid in pids:
        assert not os.path.exists("/proc/%d" % pid)
    with pytest.raises(RuntimeError, match="closed"):
        x.sum().compute(scheduler=s)


STARTS_ITS_STORE = r"""
import sys, dask, depot.dask
with depot.dask.Scheduler(workers=1, dir=sys.argv[1], capacity="64m") as s:
    print("result", dask.compute(dask.delayed(sum)([1, 2, 3]), scheduler=s)[0], flush=True)
"""


def test_starts_the_store_when_none_serves_and_it_goes_with_the_caller(tmp_path):
    import shutil
    import uuid
    from depot import daemon as daemon_module
    from conftest import class_path, java_executable
    try:
        daemon_module.find_launcher()
    except depot.DaemonStartError as e:
        pytest.skip(str(e))
    if java_executable() is None or class_path() is None:
        pytest.skip("needs a JDK 25 and the built Java modules")
    fresh = os.path.join("/dev/shm", "depot-test-" + uuid.uuid4().hex)
    try:
        with python_child(STARTS_ITS_STORE, fresh) as child:
            assert child.await_line("result", timeout=180) == "result 6"
            assert child.proc.wait(timeout=60) == 0
        deadline = time.monotonic() + 60
        while os.path.exists(os.path.join(fresh, "depot.sock")) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not os.path.exists(os.path.join(fresh, "depot.sock")), "the daemon it started outlived it"
    finally:
        shutil.rmtree(fresh, ignore_errors=True)


def test_graphs_of_very_many_tasks_go_in_batches_and_compute_the_same(scheduler, clean_store):
    from depot.dask.scheduler import AUTO_CHUNK_MIN_TASKS_PER_WORKER, AUTO_CHUNKSIZE
    n = AUTO_CHUNK_MIN_TASKS_PER_WORKER * scheduler._pool.size
    assert scheduler._chunksize_for({i: i for i in range(n - 1)}) == 1
    assert scheduler._chunksize_for({i: i for i in range(n)}) == AUTO_CHUNKSIZE
    parts = [dask.delayed(lambda i: i * 2, pure=True)(i) for i in range(n)]
    total = dask.delayed(sum)(parts)
    assert total.compute(scheduler=scheduler) == 2 * sum(range(n))
