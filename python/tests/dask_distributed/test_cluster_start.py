"""depot.dask.distributed.LocalCluster: a start that fails stops the daemon it started and removes its store, and a
script without an ``if __name__ == "__main__":`` guard gets the usual message. Each case runs a real Python
script in a child process."""

import os
import shutil
import subprocess
import sys
import textwrap
import uuid

import pytest

pytest.importorskip("distributed")

from conftest import require_launcher  # noqa: E402
from dist_processes import SessionProcess, alive, session_members, wait_until  # noqa: E402

# Reports the pid of every daemon the cluster starts; then builds a LocalCluster on the store in argv[1].
PRELUDE = """
import sys
import depot

_start = depot.start


def _reporting_start(**kwargs):
    daemon = _start(**kwargs)
    print("DAEMON", daemon.pid, flush=True)
    return daemon


depot.start = _reporting_start
from depot.dask.distributed import LocalCluster
"""

FAILING_START = PRELUDE + textwrap.dedent("""
    if __name__ == "__main__":
        try:
            LocalCluster(n_workers=1, depot_dir=sys.argv[1], depot_capacity="32m", protocol="no-such-protocol://")
        except Exception as e:
            print("START FAILED", type(e).__name__, e, flush=True)
    """)

NO_MAIN_GUARD = PRELUDE + textwrap.dedent("""
    cluster = LocalCluster(n_workers=1, threads_per_worker=1, depot_dir=sys.argv[1], depot_capacity="32m")
    print("CLUSTER STARTED", flush=True)
    cluster.close()
    """)


@pytest.fixture
def store_path():
    require_launcher()
    path = os.path.join("/dev/shm", "depot-test-" + uuid.uuid4().hex)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _run(tmp_path, source, store):
    script = tmp_path / "script.py"
    script.write_text(source)
    return SessionProcess([sys.executable, script, store], tmp_path / "script.log")


def _daemon_pids(output):
    return [int(line.split()[1]) for line in output.splitlines() if line.startswith("DAEMON ")]


def test_a_cluster_whose_start_fails_stops_its_daemon_and_removes_its_store(tmp_path, store_path):
    child = _run(tmp_path, FAILING_START, store_path)
    try:
        assert child.proc.wait(timeout=120) == 0, child.output()
        out = child.output()
        assert "START FAILED" in out, out
        daemons = _daemon_pids(out)
        assert len(daemons) == 1, out
        assert not alive(daemons[0]), "the daemon the failed start started still runs"
        assert not os.path.exists(store_path), "the store of the failed start is still there"
    finally:
        child.close()


def test_a_script_without_a_main_guard_gets_the_usual_message_and_leaves_nothing(tmp_path, store_path):
    child = _run(tmp_path, NO_MAIN_GUARD, store_path)
    try:
        child.wait_for_output("bootstrapping phase", timeout=90)
        # distributed 2026 gives up on the worker and the start fails; 2022.12 restarts the worker until stopped
        try:
            child.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            child.terminate()
        out = child.output()
        assert "CLUSTER STARTED" not in out
        assert "bootstrapping phase" in out
        daemons = _daemon_pids(out)
        assert len(daemons) == 1, "one daemon, started by the script's own process: %s" % out[-3000:]
        wait_until(lambda: not alive(daemons[0]), "the daemon to stop")
        wait_until(lambda: not os.path.exists(store_path), "the store to be removed")
        wait_until(lambda: not session_members(child.pid), "every process the script started to end")
    finally:
        child.close()
