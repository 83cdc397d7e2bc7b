"""depot.start() and depot.connect(start=True): a daemon Python starts, one per store, gone with its starter."""

import atexit
import os
import select
import signal
import subprocess
import sys

import pytest

import depot
from conftest import child_env
from depot import daemon as daemon_module

DAEMON_EXIT_TIMEOUT = 60


def _wait_gone(pid, timeout=DAEMON_EXIT_TIMEOUT):
    """Waits for a process that is not our child to exit (pidfd: no polling)."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        ready, _, _ = select.select([fd], [], [], timeout)
        assert ready, "process %d still runs %s s later" % (pid, timeout)
    finally:
        os.close(fd)


def _alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False


def _serving_pid(directory):
    with depot.connect(directory) as client:
        return client.daemon_pid


def _python(code, *args):
    return subprocess.Popen([sys.executable, "-c", code] + [str(a) for a in args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, env=child_env(), text=True)


def test_started_daemon_serves_refuses_a_second_and_stop_removes_its_store(launcher, fresh_dir):
    with depot.start(fresh_dir, capacity="64m") as d:
        assert d.dir == fresh_dir and d.running
        with depot.connect(fresh_dir) as client:
            assert client.daemon_pid == d.pid
            client.put_object(depot.ObjectId.of("x"), [1, 2, 3])
            assert client.get_object(depot.ObjectId.of("x"), timeout=1.0) == [1, 2, 3]
        child = os.fork()
        if child == 0:  # a forked child's exit handlers must leave the parent's daemon alone
            try:
                atexit._run_exitfuncs()
            finally:
                os._exit(0)
        os.waitpid(child, 0)
        assert d.running and _serving_pid(fresh_dir) == d.pid
        with pytest.raises(depot.DaemonStartError, match="already serves"):
            depot.start(fresh_dir, capacity="64m")
        assert depot.connect(fresh_dir, start=True).daemon_pid == d.pid  # attaches, starts nothing
    assert not d.running and not _alive(d.pid)
    assert not os.path.exists(fresh_dir)
    d.stop()  # harmless twice


CONNECTOR = """
import sys, depot
client = depot.connect(sys.argv[1], start=True, capacity="64m")
print(client.daemon_pid, flush=True)
sys.stdin.readline()
client.close()
"""


def test_concurrent_starters_share_one_daemon_which_stops_with_its_starter(launcher, fresh_dir):
    children = [_python(CONNECTOR, fresh_dir) for _ in range(3)]
    try:
        pids = {int(c.stdout.readline()) for c in children}
        assert len(pids) == 1, "several daemons served: %s" % pids
        (pid,) = pids
        for c in children:
            c.stdin.close()
            assert c.wait(timeout=60) == 0
        _wait_gone(pid)
    finally:
        for c in children:
            if c.poll() is None:
                c.kill()
            c.wait()
            c.stdout.close()


STARTER = """
import sys, depot
d = depot.start(sys.argv[1], capacity="64m", detach=sys.argv[2] == "detach")
print(d.pid, d._process.pid, flush=True)
if sys.argv[2] != "detach":
    sys.stdin.readline()
"""


def test_daemon_of_a_process_killed_with_sigkill_goes_and_its_store_is_removed(launcher, fresh_dir):
    child = _python(STARTER, fresh_dir, "attached")
    try:
        pid, supervisor = (int(v) for v in child.stdout.readline().split())
        assert os.path.exists(fresh_dir)
        child.send_signal(signal.SIGKILL)
        child.wait()
        _wait_gone(pid)
        _wait_gone(supervisor)
        assert not os.path.exists(fresh_dir)
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()
        child.stdout.close()
        child.stdin.close()


def test_detached_daemon_outlives_its_starter(launcher, fresh_dir):
    child = _python(STARTER, fresh_dir, "detach")
    pid = None
    try:
        pid = int(child.stdout.readline().split()[0])
        assert child.wait(timeout=60) == 0
        with depot.connect(fresh_dir) as client:
            assert client.daemon_pid == pid
    finally:
        if pid is not None and _alive(pid):
            os.kill(pid, signal.SIGTERM)
            _wait_gone(pid)
        if child.poll() is None:
            child.kill()
        child.wait()
        child.stdout.close()
        child.stdin.close()


def test_no_jdk_is_an_error_saying_what_to_install(monkeypatch):
    monkeypatch.setattr(daemon_module, "_java_major", lambda home: 17)
    with pytest.raises(depot.DaemonStartError, match="no JDK 25 or newer found.*JAVA_HOME"):
        daemon_module.find_java()


def test_unbuilt_launcher_is_an_error_saying_how_to_build_it(monkeypatch, tmp_path):
    monkeypatch.setenv("DEPOT_HOME", str(tmp_path))
    with pytest.raises(depot.DaemonStartError, match="not built.*bin/depot --help"):
        daemon_module.find_launcher()


def test_unpacked_distribution_is_launched_from_its_lib(monkeypatch, tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "depot-cli-1.0.jar").write_bytes(b"")
    monkeypatch.setenv("DEPOT_HOME", str(tmp_path))
    monkeypatch.setattr(daemon_module, "find_java", lambda: "/jdk/bin/java")
    command = daemon_module.find_launcher()
    assert command[0] == "/jdk/bin/java" and command[-3:] == ["-cp", str(tmp_path / "lib" / "*"), "dev.depot.cli.Main"]


def test_no_launcher_is_an_error_saying_where_to_get_one(monkeypatch, tmp_path):
    monkeypatch.setattr(daemon_module, "_checkouts", lambda: [])
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(depot.DaemonStartError, match="no Depot launcher found.*DEPOT_HOME"):
        daemon_module.find_launcher()


def test_capacity_beyond_the_free_space_is_an_error_before_starting(monkeypatch, fresh_dir):
    monkeypatch.setattr(daemon_module, "find_launcher", lambda: pytest.fail("started a daemon"))
    with pytest.raises(depot.DaemonStartError, match="does not fit in /dev/shm.*smaller capacity"):
        depot.start(fresh_dir, capacity="1000t")


@pytest.mark.parametrize("value, expected", [("64k", 65536), ("512m", 512 << 20), ("4G", 4 << 30), (4096, 4096),
                                             ("1gib", 1 << 30), ("123", 123)])
def test_sizes_parse_like_the_cli(value, expected):
    assert daemon_module.parse_size(value) == expected


@pytest.mark.parametrize("value", ["", "0", "-1", "1x", "1.5g", 0, -5])
def test_bad_sizes_are_refused(value):
    with pytest.raises(ValueError):
        daemon_module.parse_size(value)
