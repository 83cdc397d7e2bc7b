"""What a closed client leaves behind stays usable: arrays and data keep their mapping and pins.
Each case runs in a subprocess, so a segfault fails the test instead of killing pytest."""

import subprocess
import sys

import pytest

from conftest import child_env

pytest.importorskip("numpy")

AFTER_CLOSE = r"""
import gc, sys
import numpy as np
import depot
oid = depot.ObjectId.of("outlives")
with depot.connect(sys.argv[1]) as c:
    c.put_array(oid, np.arange(1 << 16, dtype=np.int64))
    c.put(depot.ObjectId.of("raw"), b"raw bytes")
    arr = c.get_array(oid)
    data = c.get(depot.ObjectId.of("raw")).data
    half = arr[: 1 << 15]
# closed: the mapping is still there, and the pins too
with depot.connect(sys.argv[1]) as other:
    pins = {i.id: i.pin_count for i in other.list()}
    assert pins[oid] == 1, pins
    assert other.delete(oid)                      # deferred while the array lives
    for i in range(40):
        other.put(depot.ObjectId.of("filler-%d" % i), b"\xff" * 8192)
    print("sum", int(arr.sum()), int(half.sum()), bytes(data), flush=True)
    del arr, half, data
    gc.collect()
    import time
    deadline = time.monotonic() + 5
    while other.stat().pinned_bytes and time.monotonic() < deadline:
        time.sleep(0.01)
    print("pinned", other.stat().pinned_bytes, flush=True)
"""


def test_arrays_and_data_outlive_their_closed_client(daemon):
    out = subprocess.run([sys.executable, "-c", AFTER_CLOSE, daemon.dir], env=child_env(), capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, "exit %d (139 is a segfault): %s" % (out.returncode, out.stderr)
    n = 1 << 16
    assert "sum %d %d b'raw bytes'" % (n * (n - 1) // 2, (n // 2) * (n // 2 - 1) // 2) in out.stdout
    assert "pinned 0" in out.stdout
