"""depot.dask.Scheduler's held results: a large result stays in the worker that computed it until a task in another
worker, or the caller, needs it; then that worker stores it in Depot. Workers forget what no task needs any more."""

import os
import subprocess
import sys
import time

import pytest

from dask_fixtures import clean_store, dask_daemon, scheduler  # noqa: F401

import dask  # noqa: E402
import numpy as np  # noqa: E402

from depot.dask import _worker  # noqa: E402
from depot.dask._refs import Held  # noqa: E402


def _held_now(prev, i):
    """A large result that records, in its element 1, how many results its worker holds while it runs."""
    held = len(_worker._state.held) if _worker._state is not None else -1
    out = (prev.copy() if prev is not None else np.zeros(1 << 16)) + i
    out[1] = held
    return out


def test_a_chains_results_stay_in_its_worker_and_are_forgotten_when_no_task_needs_them(scheduler, clean_store):
    v = None
    for i in range(12):
        v = dask.delayed(_held_now)(v, i)
    before = scheduler._pool.published_count
    got = v.compute(scheduler=scheduler)
    assert float(got[0]) == sum(range(12))
    # the worker holds the input being read and little else, never all twelve; only the caller's result was
    # stored in Depot
    assert 0 <= got[1] <= 3, got[1]
    assert scheduler._pool.published_count - before == 1
    del got


def _slow_part(i, seconds):
    time.sleep(seconds)
    return np.full(1 << 15, float(i))


def _pair_sum(a, b):
    return float(a.sum() + b.sum())


def test_an_input_held_by_the_other_worker_is_stored_and_read_there(scheduler, clean_store):
    # two slow parts run at once, one on each worker; their sum needs one of them moved
    a = dask.delayed(_slow_part)(1, 0.5)
    b = dask.delayed(_slow_part)(2, 0.5)
    before = scheduler._pool.published_count
    assert dask.delayed(_pair_sum)(a, b).compute(scheduler=scheduler) == 3.0 * (1 << 15)
    assert scheduler._pool.published_count - before == 1


def test_large_results_held_by_both_workers_reach_the_caller(scheduler, clean_store):
    parts = [dask.delayed(_slow_part)(i, 0.2) for i in range(4)]
    got = dask.compute(*parts, scheduler=scheduler)
    assert [float(p[0]) for p in got] == [0.0, 1.0, 2.0, 3.0]
    assert all(not p.flags.writeable for p in got)  # read-only views of shared memory
    del got


def test_waiting_for_an_input_whose_holder_died_fails_naming_it(clean_store):
    from depot.dask._objects import shared_client
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    held = Held(os.urandom(20), 1 << 20, dead.pid)
    with pytest.raises(_worker.InputLostError, match="worker %d" % dead.pid):
        _worker.await_published(shared_client(clean_store), held)


def test_a_plain_large_array_is_held_without_being_pickled_and_other_results_as_before():
    from depot.dask._refs import Inline
    from depot.ids import ObjectId
    state = _worker._WorkerState(client=None, inline_bytes=1 << 16)
    oid = lambda: ObjectId(os.urandom(20))  # noqa: E731
    big = np.arange(1 << 14, dtype=np.float64)  # 128 KiB
    held = state.encode("big", big, oid())
    assert isinstance(held, Held) and held.nbytes == big.nbytes and state.held[bytes(held.oid)] is big
    # a NumPy subclass, an object array and a small array take the pickling path
    sub = big.view(np.matrix)
    assert isinstance(state.encode("sub", sub, oid()), Held) and _worker._plain_array_nbytes(sub) == -1
    objects = np.array([object()] * 4, dtype=object)
    assert _worker._plain_array_nbytes(objects) == -1
    small = state.encode("small", np.ones(8), oid())
    assert isinstance(small, Inline) and small.load().tolist() == [1.0] * 8


def _ones(n):
    return np.ones(n)


def test_a_result_larger_than_the_store_fails_saying_store_full_with_the_sizes():
    import shutil
    import uuid
    import depot.dask
    from depot.errors import StoreFullError
    from conftest import Child, Daemon, java_command
    capacity = 8 << 20
    path = os.path.join("/dev/shm", "depot-test-" + uuid.uuid4().hex)
    try:
        daemon = Daemon(path, Child(java_command("dev.depot.server.DaemonMain", "--dir", path,
                                                 "--capacity", capacity)))
        try:
            daemon.child.await_line("depot: serving", timeout=60)
            with depot.dask.Scheduler(workers=1, dir=path, inline_bytes=4096) as s:
                big = dask.delayed(_ones, pure=True)(capacity // 4)  # 16 MiB of float64
                with pytest.raises(StoreFullError) as failed:
                    big.compute(scheduler=s)
                message = str(failed.value)
                assert message.startswith("store full: ")
                assert repr(big.key) in message and "16.0 MiB" in message and "capacity %d" % capacity in message
                assert "--capacity" in message and "smaller chunks" in message
                # the scheduler goes on: a result that fits is computed
                assert float(dask.delayed(_ones)(1000).sum().compute(scheduler=s)) == 1000.0
        finally:
            daemon.stop()
    finally:
        shutil.rmtree(path, ignore_errors=True)
