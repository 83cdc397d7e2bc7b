"""depot.dask.distributed: the Worker runs each task in a ``depot._task_context.TaskContext`` (its client, its
writer prefix, its mapping's keep_private), which is all the shuffle tasks and depot.cache read."""

import os
import shutil
import signal
import uuid

import pytest

distributed = pytest.importorskip("distributed")
pytest.importorskip("numpy")

from conftest import Child, java_command  # noqa: E402

from depot.dask.distributed import LocalCluster  # noqa: E402
from depot.dask.distributed.data import writer_of  # noqa: E402


@pytest.fixture(scope="module")
def node():
    path = os.path.join("/dev/shm", "depot-test-" + uuid.uuid4().hex)
    child = Child(java_command("dev.depot.server.DaemonMain", "--dir", path, "--capacity", 64 << 20))
    try:
        child.await_line("depot: serving", timeout=60)
        yield path
    finally:
        if child.proc.poll() is None:
            child.proc.send_signal(signal.SIGTERM)
            child.proc.wait(timeout=20)
        child.close()
        shutil.rmtree(path, ignore_errors=True)


def _context_seen():
    from depot import _task_context
    from depot.ids import ObjectId
    context = _task_context.current()
    if context is None:
        return None
    oid = ObjectId(context.id_prefix + bytes(20 - len(context.id_prefix)))
    writer = writer_of(oid)
    return os.getpid(), context.client.directory, writer and writer[0], context.keep_private is not None


async def _context_on_the_event_loop():
    return _context_seen()


def test_tasks_run_in_the_task_context_of_their_worker(node):
    with LocalCluster(n_workers=1, threads_per_worker=2, depot_dir=node) as cluster, \
            distributed.Client(cluster) as client:
        pid = list(client.run(os.getpid).values())[0]
        expected = (pid, os.path.abspath(node), pid, True)
        assert client.submit(_context_seen, pure=False).result() == expected
        assert client.submit(_context_on_the_event_loop, pure=False).result() == expected
    assert _context_seen() is None
