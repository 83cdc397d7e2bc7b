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


CLAIMANT = r"""
import os, sys, time
import depot.cache

@depot.cache.memoize(1 << 20, dir=sys.argv[1], namespace=sys.argv[2])
def compute(arg):
    print("computing", flush=True)
    while not os.path.exists(sys.argv[3]):  # the test's go-ahead
        time.sleep(0.01)
    return "child %d" % os.getpid()

print("result", compute("k"), flush=True)
"""

CLAIM_TIMEOUT = 0.5
CALL_TIMEOUT = 60


def _memoized(directory, namespace, calls):
    @depot.cache.memoize(1 << 20, dir=directory, namespace=namespace, claim_timeout=CLAIM_TIMEOUT)
    def compute(arg):
        calls.append(arg)
        return "parent %d" % os.getpid()
    return compute


class _Call(threading.Thread):
    """``fn(*args)`` in a thread: a call that waits forever fails the test instead of hanging it."""

    def __init__(self, fn, *args):
        super().__init__(daemon=True)
        self.fn, self.args, self.result, self.error = fn, args, None, None
        self.start()

    def run(self):
        try:
            self.result = self.fn(*self.args)
        except BaseException as e:
            self.error = e

    def get(self):
        self.join(CALL_TIMEOUT)
        assert not self.is_alive(), "the call still waits after %d s" % CALL_TIMEOUT
        if self.error is not None:
            raise self.error
        return self.result


def test_callers_take_over_from_a_stopped_claimant_and_compute_once(small_daemon, tmp_path):
    namespace, go, calls = _namespace(), tmp_path / "go", []
    compute = _memoized(small_daemon.dir, namespace, calls)
    with python_child(CLAIMANT, small_daemon.dir, namespace, go) as child:
        child.await_line("computing")
        pid = child.proc.pid
        os.kill(pid, signal.SIGSTOP)
        _, status = os.waitpid(pid, os.WUNTRACED)  # returns once it is stopped (reaps nothing)
        assert os.WIFSTOPPED(status)
        try:
            assert compute.cache.claimant(compute.key("k"))[0] == pid
            assert compute.cache.claimant(compute.key("k"))[1] == "stopped"
            waiters = [_Call(compute, "k") for _ in range(3)]
            results = [w.get() for w in waiters]
            assert results == ["parent %d" % os.getpid()] * 3
            assert calls == ["k"]  # one took over, the others waited for it
            assert compute.cache.lookup(compute.key("k")) == (True, results[0])
        finally:
            os.kill(pid, signal.SIGCONT)
        # resumed, the claimant finishes with its own value, which is not kept over the one there
        go.touch()
        assert child.await_line("result") == "result child %d" % pid
        child.proc.wait(timeout=CALL_TIMEOUT)
    assert compute.cache.lookup(compute.key("k")) == (True, results[0])
    compute.cache.clear()


def test_a_caller_takes_over_from_a_claimant_that_was_killed(small_daemon, tmp_path):
    namespace, calls = _namespace(), []
    compute = _memoized(small_daemon.dir, namespace, calls)
    with python_child(CLAIMANT, small_daemon.dir, namespace, tmp_path / "go") as child:
        child.await_line("computing")
        child.kill()
        assert compute.cache.claimant(compute.key("k"))[1] == "gone"
        assert _Call(compute, "k").get() == "parent %d" % os.getpid()
    assert calls == ["k"]
    # the record the killed claimant left is replaced by the next claimant's and goes with its claim
    assert compute.cache.claimant(compute.key("k")) == (None, "unknown")
    compute.cache.clear()


def test_a_caller_waits_past_the_claim_timeout_for_a_claimant_that_runs(small_daemon, tmp_path):
    namespace, go, calls = _namespace(), tmp_path / "go", []
    compute = _memoized(small_daemon.dir, namespace, calls)
    with python_child(CLAIMANT, small_daemon.dir, namespace, go) as child:
        child.await_line("computing")
        waiter = _Call(compute, "k")
        waiter.join(CLAIM_TIMEOUT * 4)
        assert waiter.is_alive()  # still waiting: the claimant runs
        go.touch()
        assert waiter.get() == "child %d" % child.proc.pid
        assert child.await_line("result") == "result child %d" % child.proc.pid
    assert calls == []
    compute.cache.clear()


def test_get_or_claim_times_out_naming_the_claimant(small_daemon, tmp_path):
    namespace = _namespace()
    compute = _memoized(small_daemon.dir, namespace, [])
    with python_child(CLAIMANT, small_daemon.dir, namespace, tmp_path / "go") as child:
        child.await_line("computing")
        with pytest.raises(TimeoutError, match="process %d \\(running\\)" % child.proc.pid):
            compute.cache.get_or_claim(compute.key("k"), timeout=0.2)
