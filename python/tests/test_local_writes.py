"""Creates, seals and aborts in shared memory, without the daemon (depot/_local_writes.py): the heap and index stay
exactly as Java's own code leaves them, interleaved with Java creates and daemon deletes, through aborts, full
stores (the daemon takes over) and processes killed while they create or hold the allocator lock."""

import os
import random
import signal
import subprocess
import threading
import time

import pytest

import depot
from depot import _atomics as atomics
from depot._layout import StoreHeaderDescriptor as H
from conftest import class_path, java_executable, python_child

I = depot.ObjectId.of
HEAP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "java", "Heap.java")


def _java(*args, timeout=120):
    java, cp = java_executable(), class_path()
    if java is None or cp is None:
        pytest.skip("needs a JDK 25 and the built Java modules")
    return subprocess.run([java, "--enable-native-access=ALL-UNNAMED", "-cp", cp, HEAP] + [str(a) for a in args],
                          capture_output=True, text=True, timeout=timeout)


def assert_heap_sound(directory):
    out = _java("check", directory)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == "healthy", out.stdout


@pytest.fixture
def client(shared_daemon):
    """A client of the module's one daemon (a JVM per test costs seconds); each test uses its own ids."""
    c = depot.connect(shared_daemon.dir)
    try:
        yield c
    finally:
        c.close()


@pytest.fixture
def daemon(shared_daemon):
    return shared_daemon


def _daemon_requests(client):
    """Requests sent on the client's connection so far (the next request id minus one)."""
    return client._conn._next_request - 1


def test_put_and_create_do_not_ask_the_daemon(client, daemon):
    before = _daemon_requests(client)
    client.put(I("local-small"), b"x" * 1000, metadata=b"meta")
    with client.create(I("local-large"), 3 << 20, metadata=b"m" * 100) as w:
        w.data[:] = bytes(range(256)) * (3 << 12)
        w.seal()
    assert _daemon_requests(client) == before
    with client.get(I("local-small"), timeout=0) as v:
        assert bytes(v.data) == b"x" * 1000 and bytes(v.metadata) == b"meta"
    with client.get(I("local-large"), timeout=0) as v:
        assert bytes(v.data[:512]) == bytes(range(256)) * 2 and len(v.data) == 3 << 20
    infos = {i.id: i for i in client.list()}
    assert infos[depot.ObjectId.of("local-small")].state == "sealed"
    assert_heap_sound(daemon.dir)


def test_ids_stay_write_once(client):
    client.put(I("local-once"), b"a")
    with pytest.raises(depot.ObjectExistsError, match="exists already"):
        client.put(I("local-once"), b"b")
    with pytest.raises(depot.ObjectExistsError):
        client.create(I("local-once"), 10)


def test_abort_gives_the_space_back(client, daemon):
    used = client.stat().used_bytes
    w = client.create(I("local-aborted"), 1 << 20)
    assert client.stat().used_bytes > used and client.stat().connection_writers == 1
    w.abort()
    assert client.stat().used_bytes == used and client.stat().connection_writers == 0
    assert not client.contains(I("local-aborted"))
    client.put(I("local-aborted"), b"again")  # the id is free again


def test_close_aborts_what_is_still_being_created(daemon):
    c = depot.connect(daemon.dir)
    used = c.stat().used_bytes
    c.create(I("local-unsealed"), 1 << 20)
    c.close()
    with depot.connect(daemon.dir) as other:
        assert other.stat().used_bytes == used and not other.contains(I("local-unsealed"))


def test_abort_waits_while_buffers_of_the_data_are_alive(client):
    count = client.stat().object_count
    w = client.create(I("local-held"), 4096)
    buffer = w.data[:10]
    w.abort()
    assert client.stat().object_count == count + 1  # still reserved under the live buffer
    del buffer
    client.put(I("local-next"), b"n")  # the next write settles the deferred abort
    assert client.stat().object_count == count + 1 and not client.contains(I("local-held"))
    client.put(I("local-held"), b"h")


def test_keep_objects_are_counted_as_kept(client, daemon):
    client.put(I("local-keep"), b"k" * 5000, keep=True)
    assert depot.ObjectId.of("local-keep") in {i.id for i in client.list()}
    kept = atomics.get_long_volatile(client._mapping.base + H.KEPT_OBJECTS_OFFSET)
    assert kept >= 1
    s = client.stat()
    assert s.kept_objects == kept and s.kept_bytes >= 5000
    assert (s.spilled_objects, s.spill_directory) == (0, None), "this daemon does not spill"
    client.delete(I("local-keep"))
    assert atomics.get_long_volatile(client._mapping.base + H.KEPT_OBJECTS_OFFSET) == kept - 1


def test_a_full_store_goes_to_the_daemon_which_evicts(client, daemon):
    # 64 MiB store: 30 objects of 4 MiB do not fit; the daemon evicts the oldest for the later ones.
    for i in range(30):
        client.put(I("local-fill-%d" % i), bytes([i]) * (4 << 20))
    stat = client.stat()
    assert stat.eviction_count > 0
    with client.get(I("local-fill-29"), timeout=0) as v:
        assert bytes(v.data[:3]) == bytes([29]) * 3
    assert_heap_sound(daemon.dir)
    for i in range(30):
        client.delete(I("local-fill-%d" % i))  # room for the module's other tests


def test_interleaved_with_java_creates_and_daemon_deletes(client, daemon):
    java = threading.Thread(target=lambda: results.append(_java("churn", daemon.dir, "java", 400, 7)))
    results = []
    java.start()
    rnd = random.Random(3)
    live = []
    try:
        for i in range(600):
            if live and rnd.random() < 0.4:
                client.delete(I(live.pop(rnd.randrange(len(live)))))
            else:
                oid = "py-%d" % i
                size = rnd.choice((1, 100, 4096, 70_000, 150_000))
                client.put(I(oid), bytes([i & 0xFF]) * size, metadata=b"p" * rnd.randrange(40))
                live.append(oid)
    finally:
        java.join()
    assert results[0].returncode == 0, results[0].stderr
    for oid in live:
        with client.get(I(oid), timeout=0) as v:
            assert set(bytes(v.data)) == {int(oid[3:]) & 0xFF}
    assert_heap_sound(daemon.dir)


def test_threads_create_at_once(client, daemon):
    count = client.stat().object_count

    def work(t):
        for i in range(200):
            client.put(I("thread-%d-%d" % (t, i)), bytes([t]) * (100 + i))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert client.stat().object_count == count + 800
    for t in range(4):
        for i in range(200):
            client.delete(I("thread-%d-%d" % (t, i)))


def test_seal_wakes_a_waiting_get_in_another_process(client, daemon):
    child = python_child("import depot, sys\n"
                         "c = depot.connect(sys.argv[1])\n"
                         "print('waiting', flush=True)\n"
                         "with c.get(depot.ObjectId.of('local-awaited'), timeout=30) as v: print('got', bytes(v.data).decode(), flush=True)\n",
                         daemon.dir)
    with child:
        child.await_line("waiting")
        time.sleep(0.2)
        client.put(I("local-awaited"), b"hello")
        assert child.await_line("got", timeout=30) == "got hello"


def _wait_for(predicate, timeout=10):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_a_process_killed_while_creating_leaves_nothing(client, daemon):
    used = client.stat().used_bytes
    child = python_child("import depot, sys, time\n"
                         "c = depot.connect(sys.argv[1])\n"
                         "w = c.create(depot.ObjectId.of('local-orphan'), 2 << 20)\n"
                         "print('created', flush=True)\n"
                         "time.sleep(60)\n", daemon.dir)
    with child:
        child.await_line("created")
        assert client.stat().used_bytes > used
        child.kill()
    # The daemon's reaper settles the dead slot's unsealed object within its interval.
    assert _wait_for(lambda: client.stat().used_bytes == used)
    client.put(I("local-orphan"), b"mine now")


def test_a_process_killed_holding_the_allocator_lock_is_recovered_from(client, daemon):
    child = python_child("import depot, sys, time\n"
                         "c = depot.connect(sys.argv[1])\n"
                         "assert c._writes._lock.try_acquire()\n"
                         "print('locked', flush=True)\n"
                         "time.sleep(60)\n", daemon.dir)
    with child:
        child.await_line("locked")
        child.kill()
    # Our creates find the lock taken and go to the daemon, which steals it from the dead holder and rebuilds.
    client.put(I("after-dead-holder"), b"x" * 10000)
    assert _wait_for(lambda: atomics.get_long_volatile(client._mapping.base + H.ALLOC_LOCK_OFFSET) == 0)
    client.put(I("after-recovery"), b"y" * 10000)
    assert client.contains(I("after-dead-holder")) and client.contains(I("after-recovery"))
    assert_heap_sound(daemon.dir)


def test_a_forked_child_creates_with_a_slot_of_its_own(client, daemon):
    w = client.create(I("local-parent"), 100)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            try:
                w.seal()  # the parent's: refused
            except depot.ViewReleasedError:
                client.put(I("local-child"), b"from the child")
                code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    w.data[:] = b"p" * 100
    w.seal()
    with client.get(I("local-child"), timeout=5) as v:
        assert bytes(v.data) == b"from the child"
    assert_heap_sound(daemon.dir)
