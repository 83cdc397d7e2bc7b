"""At scale, in seconds: many client processes connecting to one default store at once, each with a slot of its
own; a store with many objects recovered byte for byte after its daemon is killed with SIGKILL.

``DEPOT_SCALE_CLIENTS`` sets how many client processes connect at once (default 100; ``depot bench scale``
runs 1,000 of the same processes, from the same script)."""

import hashlib
import json
import os
import signal
import subprocess
import sys
import time

import pytest

import depot
from conftest import REPO, Child, Daemon, child_env, java_command

CLIENTS = int(os.environ.get("DEPOT_SCALE_CLIENTS", "100"))
CLIENTS_SCRIPT = os.path.join(REPO, "depot-bench", "src", "main", "resources", "dev", "depot", "bench",
                              "clients_at_once.py")
RECOVERED_OBJECTS = 10_000
#: an index of 16,384 slots (one per 16 KiB), which holds 12,288 objects
RECOVERY_CAPACITY = 256 << 20


def _eventually(what, condition, seconds=30):
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("not within %d s: %s" % (seconds, what))
        time.sleep(0.05)


def test_many_client_processes_connect_at_once_each_with_a_slot_of_its_own(daemon, client):
    before = client.stat().client_count
    hub = subprocess.Popen([sys.executable, CLIENTS_SCRIPT, daemon.dir, str(CLIENTS)], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, env=child_env(), text=True)
    try:
        connected = json.loads(hub.stdout.readline())
        assert connected["failed"] == 0, connected["errors"]
        assert connected["connected"] == CLIENTS and connected["slots"] == CLIENTS
        assert client.stat().client_count == before + CLIENTS
        hub.stdin.close()  # the children close their clients and exit
        reaped = json.loads(hub.stdout.readline())
        assert reaped == {"reaped": CLIENTS, "bad_exits": 0}
        assert hub.wait(timeout=120) == 0
    finally:
        if hub.poll() is None:
            hub.kill()  # its children then find their pipes closed, and exit
        hub.wait()
        hub.stdout.close()
    _eventually("every child's slot is free again", lambda: client.stat().client_count == before)


def _content(i):
    """Object i's bytes: 1 to 4,096 of them, different for every i."""
    seed = hashlib.sha256(b"%d" % i).digest()
    return (seed * 128)[:1 + (i * 7919) % 4096]


def _start_daemon(directory):
    d = Daemon(directory, Child(java_command("dev.depot.server.DaemonMain", "--dir", directory, "--capacity",
                                             RECOVERY_CAPACITY)))
    try:
        d.child.await_line("depot: serving", timeout=60)
    except BaseException:
        d.stop()
        raise
    return d


def test_a_store_of_many_objects_is_recovered_byte_exact_after_its_daemon_is_killed(store_dir):
    ids = [depot.ObjectId.of("recovered-%d" % i) for i in range(RECOVERED_OBJECTS)]
    first = _start_daemon(store_dir)
    try:
        with depot.connect(store_dir) as c:
            for i, oid in enumerate(ids):
                c.put(oid, _content(i), metadata=b"m%d" % i)
            assert c.stat().object_count == RECOVERED_OBJECTS
        first.child.proc.send_signal(signal.SIGKILL)
        assert first.child.proc.wait(timeout=30) == -signal.SIGKILL
    finally:
        first.stop()
    second = _start_daemon(store_dir)
    try:
        with depot.connect(store_dir) as c:
            stats = c.stat()
            assert stats.object_count == RECOVERED_OBJECTS and stats.sealed_count == RECOVERED_OBJECTS
            for i, oid in enumerate(ids):
                with c.get(oid, timeout=0) as view:
                    assert bytes(view.data) == _content(i), "object %d differs after recovery" % i
                    assert view.metadata == b"m%d" % i
            # the recovered heap still allocates and frees: every object deleted leaves it empty
            for oid in ids:
                assert c.delete(oid)
            stats = c.stat()
            assert stats.object_count == 0 and stats.used_bytes == 0
    finally:
        second.stop()
