"""depot.cache: memoize and SharedCache against a small store (8 MiB), with real child processes that claim keys
and are stopped, resumed and killed."""

import os
import shutil
import signal
import threading
import uuid
import warnings

import pytest

import depot.cache
from conftest import Child, Daemon, java_command, python_child

SMALL_CAPACITY = 8 << 20


@pytest.fixture(scope="module")
def small_daemon():
    path = os.path.join("/dev/shm", "depot-test-" + uuid.uuid4().hex)
    try:
        d = Daemon(path, Child(java_command("dev.depot.server.DaemonMain", "--dir", path,
                                            "--capacity", SMALL_CAPACITY)))
        try:
            d.child.await_line("depot: serving", timeout=60)
            yield d
        finally:
            d.stop()
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _namespace():
    return "test-" + uuid.uuid4().hex


def test_memoize_returns_a_result_larger_than_the_store_uncached_with_a_warning(small_daemon):
    calls = []

    @depot.cache.memoize(limit_bytes=1 << 30, dir=small_daemon.dir, namespace=_namespace())
    def blob(n):
        calls.append(n)
        return b"x" * n

    with pytest.warns(RuntimeWarning, match="uncached.*larger than the whole store.*capacity"):
        assert blob(2 * SMALL_CAPACITY) == b"x" * (2 * SMALL_CAPACITY)
    with pytest.warns(RuntimeWarning, match="uncached"):
        assert len(blob(2 * SMALL_CAPACITY)) == 2 * SMALL_CAPACITY
    assert calls == [2 * SMALL_CAPACITY] * 2  # not cached, so computed each time
    # the claim went with the failed put: a result that fits is cached as usual
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert blob(1000) == blob(1000)
    assert calls[2:] == [1000]
    blob.cache.clear()
