"""Fixtures for the depot.dask tests (imported by each test module): one daemon and one two-worker scheduler per
test module (workers take seconds to start), both always stopped; every test checks that the store holds nothing of its own afterwards."""

import gc
import os
import shutil
import uuid

import pytest

pytest.importorskip("dask", reason="depot.dask needs Dask (python3-dask, or pip install dask)")
pytest.importorskip("numpy", reason="the depot.dask tests use NumPy")

from conftest import Child, Daemon, java_command  # noqa: E402  (python/tests/conftest.py)

CAPACITY = 512 << 20


@pytest.fixture(scope="module")
def dask_daemon():
    path = os.path.join("/dev/shm", "depot-test-" + uuid.uuid4().hex)
    d = None
    try:
        d = Daemon(path, Child(java_command("dev.depot.server.DaemonMain", "--dir", path, "--capacity", CAPACITY)))
        d.child.await_line("depot: serving", timeout=60)
        yield d
    finally:
        if d is not None:
            d.stop()
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def scheduler(dask_daemon):
    import depot.dask
    s = depot.dask.Scheduler(workers=2, dir=dask_daemon.dir, inline_bytes=4096)
    try:
        yield s
    finally:
        s.close()


def store_objects(directory, prefix=b""):
    """The objects in the store whose ids start with ``prefix``, after the releases of garbage are sent."""
    from depot.dask._objects import shared_client
    gc.collect()
    c = shared_client(directory)
    c.flush()
    return [i for i in c.list() if bytes(i.id).startswith(prefix)]


@pytest.fixture
def clean_store(dask_daemon, scheduler):
    """Asserts that the test left no object of the scheduler (nor anything else) in the store."""
    yield dask_daemon.dir
    left = store_objects(dask_daemon.dir, scheduler._pool.token)
    assert left == [], "the scheduler left objects in the store: %r" % left
