"""Across processes: Python to Python, Java to Python and back, and a killed Python client."""

import subprocess
import time

import pytest

import depot
from conftest import java_command, python_child

PRODUCER = """
import sys, depot
with depot.connect(sys.argv[1]) as c:
    with c.create(depot.ObjectId.of(sys.argv[2]), 1 << 20, metadata=b"from-child") as w:
        w.data[:] = bytes(range(256)) * 4096
        w.seal()
print("sealed", flush=True)
"""

HOLDER = """
import sys, time, depot
c = depot.connect(sys.argv[1])
view = c.get(depot.ObjectId.of("shared"), timeout=0)
writer = c.create(depot.ObjectId.of("never-sealed"), 4096)
print("holding", flush=True)
time.sleep(120)
"""


def _eventually(what, condition, seconds=15):
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("not within %d s: %s" % (seconds, what))
        time.sleep(0.02)


def test_python_producer_to_python_consumer(daemon, client):
    with python_child(PRODUCER, daemon.dir, "py-to-py") as child:
        # started before the object exists: the get waits for the child's seal
        with client.get(depot.ObjectId.of("py-to-py"), timeout=60) as view:
            assert view.metadata == b"from-child"
            assert view.size == 1 << 20
            assert bytes(view.data[:512]) == bytes(range(256)) * 2
        child.await_line("sealed")
        assert child.proc.wait(timeout=30) == 0


def test_java_producer_to_python_consumer(daemon, client):
    np = pytest.importorskip("numpy")
    out = subprocess.run(java_command("dev.depot.server.tools.ArrayTool", "put", daemon.dir, "java-array", 5, 3),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    array = client.get_array(depot.ObjectId.of("java-array"), timeout=10)
    assert array.dtype == np.dtype("<f8") and array.shape == (5, 3)
    assert np.array_equal(array.ravel(), np.arange(15) * 0.5)


def test_python_producer_to_java_consumer(daemon, client):
    np = pytest.importorskip("numpy")
    client.put_array(depot.ObjectId.of("python-array"), np.arange(20, dtype="<i4").reshape(4, 5))
    out = subprocess.run(java_command("dev.depot.server.tools.ArrayTool", "check", daemon.dir, "python-array"),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.strip() == "ok <i4 [4, 5]"


def test_a_killed_client_has_its_pins_released_and_objects_aborted(daemon, client):
    client.put(depot.ObjectId.of("shared"), bytes(8192))
    with python_child(HOLDER, daemon.dir) as child:
        child.await_line("holding")
        stats = client.stat()
        assert stats.pinned_bytes > 0 and stats.unsealed_bytes > 0
        child.kill()
    _eventually("the killed client's pin and unsealed object are gone",
                lambda: client.stat().pinned_bytes == 0 and client.stat().unsealed_bytes == 0)
    assert [o.state for o in client.list()] == ["sealed"]
    assert client.delete(depot.ObjectId.of("shared"))
