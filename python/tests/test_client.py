import hashlib
import os
import threading
import time

import pytest

import depot
from depot import _wire
from depot.ids import as_id


def test_put_then_get_returns_the_same_bytes_and_metadata(client):
    oid = depot.ObjectId.of("greeting")
    client.put(oid, b"hello, depot", metadata=b"text/plain")
    with client.get(oid, timeout=0) as view:
        assert bytes(view.data) == b"hello, depot"
        assert view.metadata == b"text/plain"
        assert view.size == 12
        assert view.data.readonly


def test_writer_fills_shared_memory_in_place(client):
    oid = depot.ObjectId.random()
    with client.create(oid, 1000, metadata=b"m") as writer:
        writer.data[:] = bytes(range(250)) * 4
        assert not client.contains(oid)
        writer.seal()
    assert client.contains(oid)
    with client.get(oid, 0) as view:
        assert view.data[999] == 249


def test_writer_left_unsealed_is_aborted(client):
    oid = depot.ObjectId.random()
    with client.create(oid, 100) as writer:
        writer.data[0] = 1
    assert client.list() == []
    with pytest.raises(depot.ViewReleasedError):
        writer.data
    writer.abort()  # harmless


def test_writer_abort_frees_the_space(client):
    oid = depot.ObjectId.random()
    writer = client.create(oid, 4096)
    assert client.stat().connection_writers == 1
    writer.abort()
    assert client.stat().connection_writers == 0
    assert client.stat().used_bytes == 0


def test_get_of_a_missing_object_raises_object_missing(client):
    oid = depot.ObjectId.of("absent")
    with pytest.raises(depot.ObjectMissingError, match="does not exist"):
        client.get(oid, timeout=0)
    with pytest.raises(depot.ObjectMissingError, match="not sealed within 20 ms"):
        client.get(oid, timeout=0.02)


def test_get_waits_until_another_client_seals(daemon, client):
    oid = depot.ObjectId.of("later")
    got = {}

    def wait():
        with depot.connect(daemon.dir) as waiter:
            with waiter.get(oid, timeout=None) as view:
                got["bytes"] = bytes(view.data)

    t = threading.Thread(target=wait)
    t.start()
    client.put(oid, b"arrived")
    t.join(30)
    assert got["bytes"] == b"arrived"


def test_get_many_gives_none_for_missing_objects(client):
    a, b, missing = depot.ObjectId.of("a"), depot.ObjectId.of("b"), depot.ObjectId.of("missing")
    client.put(a, b"A")
    client.put(b, b"BB")
    views = client.get_many([a, missing, b], timeout=0.01)
    assert views[1] is None
    assert bytes(views[0].data) == b"A" and bytes(views[2].data) == b"BB"
    assert client.stat().connection_pins == 2
    for v in (views[0], views[2]):
        v.release()
    assert client.stat().pinned_bytes == 0


def test_a_released_view_cannot_be_read(client):
    oid = depot.ObjectId.random()
    client.put(oid, b"x" * 10)
    view = client.get(oid, 0)
    assert client.stat().pinned_bytes > 0
    view.release()
    assert client.stat().pinned_bytes == 0
    with pytest.raises(depot.ViewReleasedError, match="released"):
        view.data
    view.release()  # harmless


def test_contains_delete_list_stat_and_evict(client):
    oid = depot.ObjectId.of("kept")
    client.put(oid, bytes(1000))
    assert client.contains(oid)
    [info] = client.list()
    assert info.id == oid and info.state == "sealed" and info.data_size == 1000 and info.pin_count == 0
    stats = client.stat()
    assert stats.capacity_bytes >= 64 << 20 and stats.object_count == 1 and stats.daemon_pid > 0
    assert client.evict(1) >= 1000
    assert not client.contains(oid)
    client.put(oid, b"again")
    assert client.delete(oid)
    assert not client.delete(oid)
    assert client.list() == []


def test_a_create_too_large_raises_store_full(client):
    with pytest.raises(depot.StoreFullError):
        client.create(depot.ObjectId.random(), 1 << 30, evict=False)


def test_creating_an_existing_object_raises_object_exists(client):
    oid = depot.ObjectId.random()
    client.put(oid, b"1")
    with pytest.raises(depot.ObjectExistsError):
        client.put(oid, b"2")


def test_closing_the_client_releases_its_pins_and_aborts_its_objects(daemon, client):
    oid = depot.ObjectId.random()
    client.put(oid, b"pinned")
    other = depot.connect(daemon.dir)
    view = other.get(oid, 0)
    writer = other.create(depot.ObjectId.random(), 500)
    assert client.stat().pinned_bytes > 0
    other.close()
    assert view.released
    with pytest.raises(depot.ViewReleasedError):
        writer.data
    with pytest.raises(depot.ViewReleasedError, match="closed"):
        other.stat()
    # The daemon ends the other connection on its own thread: wait (at most 10 s) for it.
    deadline = time.monotonic() + 10
    while True:
        s = client.stat()
        if (s.pinned_bytes == 0 and s.unsealed_bytes == 0) or time.monotonic() > deadline:
            break
        time.sleep(0.01)
    assert s.pinned_bytes == 0 and s.unsealed_bytes == 0
    assert [o.state for o in client.list()] == ["sealed"]


def test_connecting_without_a_daemon_says_how_to_start_one(store_dir):
    with pytest.raises(depot.DaemonNotRunningError, match="depot serve --dir"):
        depot.connect(store_dir)


def test_another_protocol_major_version_is_refused(daemon, monkeypatch):
    monkeypatch.setattr(_wire, "VERSION_MAJOR", _wire.VERSION_MAJOR + 1)
    with pytest.raises(depot.VersionMismatchError, match="speaks protocol"):
        depot.connect(daemon.dir)


def test_default_directory_follows_depot_dir(monkeypatch):
    monkeypatch.setenv("DEPOT_DIR", "/tmp/somewhere")
    assert depot.default_directory() == "/tmp/somewhere"
    monkeypatch.delenv("DEPOT_DIR")
    assert depot.default_directory().startswith("/dev/shm/depot-")


def test_object_ids_match_the_java_derivation():
    assert depot.ObjectId.of("x").hex() == hashlib.sha256(b"x").hexdigest()[:40]
    oid = depot.ObjectId.random()
    assert depot.ObjectId.from_hex(oid.hex()) == oid
    assert depot.ObjectId.random() != oid
    with pytest.raises(ValueError):
        depot.ObjectId.from_hex("abc")
    with pytest.raises(TypeError, match="ObjectId.of"):
        as_id("a name")


class _Interrupted(Exception):
    pass


def test_a_get_interrupted_while_waiting_leaves_the_client_in_step(daemon, client):
    import signal

    oid = depot.ObjectId.of("interrupted")

    def interrupt(signum, frame):
        raise _Interrupted()

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        with pytest.raises(_Interrupted):
            client.get(oid, timeout=None)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    # the next request ends the daemon's wait; the abandoned GET's answer is skipped
    assert not client.contains(oid)
    with depot.connect(daemon.dir) as other:
        other.put(oid, b"late")
        assert client.stat().connection_pins == 0
        assert other.stat().pinned_bytes == 0
    with client.get(oid, timeout=1) as view:
        assert bytes(view.data) == b"late"


REFUSED_USER = """
import os, sys, depot
os.setgid(65534)
os.setuid(65534)
from depot._connection import Connection
for attempt in (lambda: depot.connect(sys.argv[1]), lambda: Connection(sys.argv[1])):
    try:
        attempt()
        print("served")
    except depot.PermissionDeniedError as e:
        print("refused:", e)
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run a client as another user")
def test_a_client_of_another_user_is_refused(daemon):
    from conftest import python_child
    # Open the directory and socket to everyone, so only the daemon's own check stands in the way.
    os.chmod(daemon.dir, 0o711)
    os.chmod(os.path.join(daemon.dir, "depot.sock"), 0o666)
    with python_child(REFUSED_USER, daemon.dir) as child:
        # the client refuses a store directory that is not its user's ...
        line = child.await_line("")
        assert line.startswith("refused:") and "belongs to root (uid 0), not to you" in line, line
        # ... and a socket served by another user, checked with SO_PEERCRED before saying anything
        line = child.await_line("")
        assert line.startswith("refused:") and "not by your own user" in line, line


def test_get_many_takes_more_ids_than_one_request_holds(client):
    oids = [depot.ObjectId.of("many-%d" % i) for i in range(client.max_get_many + 5)]
    for oid in oids[::100]:
        client.put(oid, b"x")
    views = client.get_many(oids, timeout=0)
    assert len(views) == len(oids)
    found = [v for v in views if v is not None]
    assert len(found) == len(oids[::100])
    for v in found:
        v.release()
    assert client.stat().connection_pins == 0
