"""depot._task_context: the context a Depot scheduler sets around its tasks, and the client code in tasks uses."""

import contextvars
import threading

from depot import _task_context
from depot._task_context import TaskContext, client_for, current, running


class _FakeClient:
    def __init__(self, directory):
        self.directory = directory


def test_running_sets_the_context_for_the_block_and_restores_the_outer_one():
    outer, inner = TaskContext(_FakeClient("/a"), b"\x01"), TaskContext(_FakeClient("/b"), b"\x02")
    assert current() is None
    with running(outer):
        assert current() is outer
        with running(inner):
            assert current() is inner
        assert current() is outer
    assert current() is None


def test_the_context_follows_copies_of_the_context_and_no_other_thread():
    context = TaskContext(_FakeClient("/a"), b"\x01")
    seen = {}
    with running(context):
        copied = contextvars.copy_context()  # what distributed hands its executor threads
        other = threading.Thread(target=lambda: seen.setdefault("other", current()))
        other.start()
        other.join()
    assert seen["other"] is None
    assert copied.run(current) is context
    assert current() is None


def test_client_for_is_the_tasks_client_for_its_store_and_the_shared_client_for_another(monkeypatch):
    shared = {}
    monkeypatch.setattr(_task_context, "shared_client", lambda d: shared.setdefault(d, _FakeClient(d)))
    mine = _FakeClient("/dev/shm/depot-a")
    with running(TaskContext(mine, b"")):
        assert client_for("/dev/shm/depot-a") is mine
        assert client_for("/dev/shm/depot-b") is shared["/dev/shm/depot-b"]
    assert client_for("/dev/shm/depot-a") is shared["/dev/shm/depot-a"]
