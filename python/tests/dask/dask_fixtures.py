"""Fixtures for the depot.dask tests (imported by each test module): one daemon and one two-worker scheduler for
the whole session (workers take seconds to start), both always stopped; tests check that the store holds
nothing of theirs afterwards."""

import gc
import os
import shutil
import uuid

import pytest

pytest.importorskip("dask", reason="depot.dask needs Dask (python3-dask, or pip install dask)")
pytest.importorskip("numpy", reason="the depot.dask tests use NumPy")

from conftest import Child, Daemon, java_command  # noqa: E402  (python/tests/conftest.py)

CAPACITY = 512 << 20


class _Shared:
    """One daemon and one scheduler for every test module that imports these fixtures (pytest makes a session
    fixture per importing module; they share these, and the last one to finish stops them)."""

    users = 0
    daemon = None
    scheduler = None
    path = None

    @classmethod
    def acquire(cls):
        if cls.users == 0:
            import depot.dask
            cls.path = os.path.join("/dev/shm", "depot-test-" + uuid.uuid4().hex)
            try:
                cls.daemon = Daemon(cls.path, Child(java_command("dev.depot.server.DaemonMain", "--dir", cls.path,
                                                                 "--capacity", CAPACITY)))
                cls.daemon.child.await_line("depot: serving", timeout=60)
                cls.scheduler = depot.dask.Scheduler(workers=2, dir=cls.path, inline_bytes=4096)
            except BaseException:
                cls.users = 1
                cls.release()
                raise
        cls.users += 1

    @classmethod
    def release(cls):
        cls.users -= 1
        if cls.users > 0:
            return
        try:
            if cls.scheduler is not None:
                cls.scheduler.close()
        finally:
            cls.scheduler = None
            if cls.daemon is not None:
                cls.daemon.stop()
            cls.daemon = None
            shutil.rmtree(cls.path, ignore_errors=True)


@pytest.fixture(scope="session")
def dask_daemon():
    _Shared.acquire()
    try:
        yield _Shared.daemon
    finally:
        _Shared.release()


@pytest.fixture(scope="session")
def scheduler(dask_daemon):
    return _Shared.scheduler


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
