"""Socket-free gets: pins in the client's own slot, their lifetime, and what the daemon does with them."""

import gc
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

import depot
from conftest import child_env, python_child


def _until(condition, what, timeout=5.0):
    """Waits for ``condition()`` with a deadline (the daemon acts on its own schedule)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("%s did not happen within %s s" % (what, timeout))
        time.sleep(0.01)


def test_gets_and_releases_need_no_daemon(daemon, client):
    a, b = depot.ObjectId.of("a"), depot.ObjectId.of("b")
    client.put(a, b"alpha")
    client.put(b, b"beta")
    os.kill(daemon.child.proc.pid, signal.SIGSTOP)  # a stopped daemon answers no request
    try:
        with client.get(a, timeout=0) as view:
            assert bytes(view.data) == b"alpha"
        assert client.contains(b) and not client.contains(depot.ObjectId.of("c"))
        views = client.get_many([a, depot.ObjectId.of("c"), b], timeout=0)
        assert [bytes(v.data) if v else None for v in views] == [b"alpha", None, b"beta"]
        for v in views:
            if v:
                v.release()
        with pytest.raises(depot.ObjectMissingError, match="within 30 ms"):
            client.get(depot.ObjectId.of("c"), timeout=0.03)
    finally:
        os.kill(daemon.child.proc.pid, signal.SIGCONT)
    assert client.stat().pinned_bytes == 0


def test_a_pinned_view_keeps_its_bytes_when_its_id_is_deleted_and_reused(client):
    # a release must end exactly its own pin, not the oldest one on the id.
    x = depot.ObjectId.of("reused")
    client.put(x, b"A" * 4096)
    first = client.get(x)
    assert client.delete(x)                    # deferred: first pins it
    client.put(x, b"B" * 4096)
    client.get(x).release()
    for i in range(20):
        client.put(depot.ObjectId.of("filler-%d" % i), b"C" * 4096)
    assert bytes(first.data) == b"A" * 4096
    pins = {info.id: info.pin_count for info in client.list()}
    assert pins[x] == 0, "the new X is not pinned by anybody"
    first.release()
    _until(lambda: client.stat().object_count == 21, "the daemon's sweep finishing the deferred delete")


def test_a_waiting_get_wakes_when_another_process_seals(daemon, client):
    oid = depot.ObjectId.of("later")
    got = []
    waiter = threading.Thread(target=lambda: got.append(bytes(client.get(oid, timeout=1e10).data)))
    waiter.start()
    try:
        time.sleep(0.1)  # let it sleep in FUTEX_WAIT (the test holds either way)
        assert waiter.is_alive(), "a huge timeout waits, it does not return at once"
        with python_child("import depot, sys\ndepot.connect(sys.argv[1]).put(depot.ObjectId.of('later'), b'now')\n"
                          "print('put', flush=True)", daemon.dir) as child:
            child.await_line("put")
    finally:
        waiter.join(30)
    assert got == [b"now"]


def test_timeouts_of_none_inf_and_huge_numbers_all_mean_forever(client):
    for forever in (None, float("inf"), 1e30, 2 ** 80):
        oid = depot.ObjectId.random()
        t = threading.Thread(target=lambda: client.get(oid, timeout=forever).release())
        t.start()
        time.sleep(0.02)
        assert t.is_alive(), forever
        client.put(oid, b"x")
        t.join(30)
        assert not t.is_alive()


def test_the_daemon_reclaims_the_pins_of_a_killed_python_process(daemon, client):
    oid = depot.ObjectId.of("held")
    client.put(oid, b"x" * 1000)
    code = ("import depot, sys\nc = depot.connect(sys.argv[1])\n"
            "views = [c.get(depot.ObjectId.of('held')) for _ in range(50)]\nprint('holding', flush=True)\n"
            "import time\ntime.sleep(60)\n")
    with python_child(code, daemon.dir) as child:
        child.await_line("holding")
        assert client.stat().pinned_bytes > 0
        pins = {i.id: i.pin_count for i in client.list()}
        assert pins[oid] == 50
        child.kill()  # SIGKILL
        killed = time.monotonic()
    _until(lambda: client.stat().pinned_bytes == 0, "reclaiming the killed client's pins", timeout=5)
    assert time.monotonic() - killed < 1.5, "reclaimed within the daemon's reap interval"
    assert client.delete(oid)


def test_the_object_stays_pinned_while_its_data_is_alive_after_the_view_is_dropped(client):
    oid = depot.ObjectId.of("data-keeps-pin")
    client.put(oid, b"kept" * 100)
    data = client.get(oid).data                 # the view itself is dropped at once
    gc.collect()
    assert client.stat().connection_pins == 1
    assert client.delete(oid)
    for i in range(10):
        client.put(depot.ObjectId.of("other-%d" % i), b"Z" * 400)
    assert bytes(data) == b"kept" * 100
    del data
    gc.collect()
    assert client.stat().connection_pins == 0


def test_a_released_view_with_live_slices_keeps_its_pin_until_they_go(client):
    oid = depot.ObjectId.of("sliced")
    client.put(oid, b"0123456789")
    view = client.get(oid)
    part = view.data[2:5]
    view.release()
    with pytest.raises(depot.ViewReleasedError):
        view.data
    assert client.stat().connection_pins == 1, "the slice still reads the object, so it stays pinned"
    assert bytes(part) == b"234"
    del part
    assert client.stat().connection_pins == 0


def test_a_dropped_view_releases_its_pin(client):
    oid = depot.ObjectId.of("dropped")
    client.put(oid, b"x")
    client.get(oid)
    gc.collect()
    assert client.stat().connection_pins == 0


def test_threads_share_one_client(client):
    oids = [depot.ObjectId.of("t-%d" % i) for i in range(20)]
    for i, oid in enumerate(oids):
        client.put(oid, bytes([i]) * 100)
    errors = []

    def reader():
        try:
            for _ in range(200):
                for i, oid in enumerate(oids):
                    with client.get(oid, timeout=0) as v:
                        assert bytes(v.data) == bytes([i]) * 100
        except Exception as e:  # reported below
            errors.append(e)

    def writer():
        try:
            for i in range(100):
                client.put(depot.ObjectId.of("w-%d" % i), b"w")
        except Exception as e:
            errors.append(e)

    threads = [threading.Thread(target=reader) for _ in range(4)] + [threading.Thread(target=writer)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert errors == []
    assert client.stat().connection_pins == 0


FORK_CHILD = """
import os, sys, depot
c = depot.connect(sys.argv[1])
a = depot.ObjectId.of("forked")
view = c.get(a)
pid = os.fork()
if pid == 0:
    view.release()                        # the parent's pin: not the child's to release
    with c.get(a) as mine:                # reconnects by itself: a slot and pins of its own
        assert bytes(mine.data) == b"shared"
    c.put(depot.ObjectId.of("from-child"), b"child")
    os._exit(0)
_, status = os.waitpid(pid, 0)
print("child", status, flush=True)
print("pins", [i.pin_count for i in c.list() if i.id == a][0], flush=True)
assert bytes(view.data) == b"shared"
view.release()
print("pins", [i.pin_count for i in c.list() if i.id == a][0], flush=True)
"""


def test_a_forked_child_gets_its_own_slot_and_leaves_the_parents_pins_alone(daemon, client):
    client.put(depot.ObjectId.of("forked"), b"shared")
    with python_child(FORK_CHILD, daemon.dir) as child:
        assert child.await_line("child") == "child 0"
        assert child.await_line("pins") == "pins 1"
        assert child.await_line("pins") == "pins 0"
    assert client.contains(depot.ObjectId.of("from-child"))


def test_closing_returns_pins_and_writers(client):
    oid = depot.ObjectId.of("closing")
    client.put(oid, b"x" * 100)
    other = depot.connect(client.directory)
    view = other.get(oid)
    writer = other.create(depot.ObjectId.of("unsealed"), 1000)
    other.close()
    assert view.released
    with pytest.raises(depot.ViewReleasedError):
        writer.data
    stats = client.stat()
    assert stats.pinned_bytes == 0 and stats.unsealed_bytes == 0
    with pytest.raises(depot.ClientClosedError, match="closed"):
        other.get(oid)


def test_a_client_killed_mid_get_leaves_only_whole_pin_records(daemon, client):
    """SIGKILL at arbitrary points of a get loop: the daemon always reclaims everything."""
    oid = depot.ObjectId.of("hammered")
    client.put(oid, b"h" * 64)
    clients = client.stat().client_count
    code = ("import depot, sys\nc = depot.connect(sys.argv[1])\noid = depot.ObjectId.of('hammered')\n"
            "print('running', flush=True)\nwhile True:\n    v = c.get(oid)\n    w = c.get(oid)\n    v.release()\n")
    for delay in (0.01, 0.03, 0.07):
        proc = subprocess.Popen([sys.executable, "-c", code, daemon.dir], stdout=subprocess.PIPE, env=child_env(),
                                text=True)
        try:
            assert proc.stdout.readline().strip() == "running"
            time.sleep(delay)
        finally:
            proc.kill()
            proc.wait()
            proc.stdout.close()
    _until(lambda: client.stat().pinned_bytes == 0, "reclaiming killed clients' pins")
    _until(lambda: client.stat().client_count == clients, "freeing the killed clients' slots and sessions")


def test_numpy_frombuffer_of_a_released_view_keeps_the_pin(client):
    np = pytest.importorskip("numpy")
    oid = depot.ObjectId.of("frombuffer")
    client.put(oid, bytes(range(256)) * 4)
    view = client.get(oid)
    array = np.frombuffer(view.data, dtype=np.uint8)   # holds the memoryview, but no buffer export
    view.release()
    assert client.delete(oid)
    for i in range(10):
        client.put(depot.ObjectId.of("over-%d" % i), b"\xee" * 1024)
    assert client.stat().connection_pins == 1
    assert array[:256].tolist() == list(range(256))
    del array
    assert client.stat().connection_pins == 0


def test_an_aborted_writer_whose_data_is_still_used_is_aborted_when_it_goes(client):
    oid = depot.ObjectId.of("aborted-late")
    writer = client.create(oid, 4096)
    kept = writer.data[:16]
    writer.abort()
    with pytest.raises(depot.ViewReleasedError):
        writer.data
    assert client.stat().unsealed_bytes > 0, "its space is not reused while a buffer can still write into it"
    del kept
    assert client.stat().unsealed_bytes == 0


def test_a_get_of_a_spilled_object_without_a_spilling_daemon_says_what_to_start(client):
    from depot import _atomics
    from depot._layout import EntryState, IndexEntryDescriptor as IE
    oid = depot.ObjectId.of("spilled")
    client.put(oid, b"s" * 100)
    reader = client._reader
    slot, generation = reader.find_sealed(bytes(oid), reader.home_of(bytes(oid)))
    address = client._mapping.base + client._mapping.index_offset + slot * IE.ENTRY_LENGTH
    sealed = _atomics.get_long_volatile(address)
    # As the daemon's spiller leaves an entry it wrote out (a daemon without --spill-dir never does).
    assert _atomics.compare_and_set_long(address, sealed, (sealed & ~0xFF) | EntryState.SPILLED)
    try:
        with pytest.raises(depot.DepotError, match="is spilled to disk but no daemon with a spill directory"):
            client.get(oid, timeout=0)
    finally:
        assert _atomics.compare_and_set_long(address, (sealed & ~0xFF) | EntryState.SPILLED, sealed)
    assert client.get(oid, timeout=0).to_bytes() == b"s" * 100


def test_releasing_the_last_pins_wakes_a_put_waiting_for_room(daemon, client):
    from depot import _atomics as atomics
    from depot._layout import StoreHeaderDescriptor as H
    # the 64 MiB store filled with objects this client holds pinned: a put that needs room waits (in the daemon)
    # until an unpin makes one evictable; Python's unpin must wake it, as Java's does, not leave it to its timeout
    ids = [depot.ObjectId.of("full-%d" % i) for i in range(14)]
    for i, oid in enumerate(ids):
        client.put(oid, bytes([i]) * (4 << 20))
    views = [client.get(oid, timeout=0) for oid in ids]
    done = []
    put = threading.Thread(target=lambda: done.append(client.put(depot.ObjectId.of("late"), b"x" * (12 << 20),
                                                                 timeout=60)))
    put.start()
    try:
        waiters = client._mapping.base + H.EVICTING_SPACE_WAITERS_OFFSET
        _until(lambda: atomics.get_int_volatile(waiters) > 0, "the put waiting for room")
        time.sleep(0.3)  # past its spin, asleep on the space sequence
        assert put.is_alive()
    finally:
        for v in views:
            v.release()
    put.join(timeout=20)
    assert not put.is_alive(), "the put still waits for room 20 s after the pins that kept it out were released"
    with client.get(depot.ObjectId.of("late"), timeout=0) as v:
        assert bytes(v.data[:1]) == b"x"


def test_a_python_client_takes_one_slot_and_a_second_only_once_the_daemon_creates_for_it(daemon, client):
    before = client.stat().client_count
    other = depot.connect(daemon.dir)
    try:
        other.put(depot.ObjectId.of("small"), b"s" * 100)  # made in shared memory, without the daemon
        assert other.contains(depot.ObjectId.of("small")) and other.stat().object_count >= 1
        assert client.stat().client_count == before + 1
        # a 64 MiB store with no room left: the daemon evicts and creates for this client, in a session
        for i in range(20):
            other.put(depot.ObjectId.of("fill-%d" % i), bytes([i]) * (4 << 20))
        assert other.stat().eviction_count > 0
        assert client.stat().client_count == before + 2
    finally:
        other.close()
    _until(lambda: client.stat().client_count == before, "freeing the closed client's slot and session")
