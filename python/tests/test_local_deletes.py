"""Deletes in shared memory, without the daemon (depot/_local_writes.py, ``LocalWrites.delete``): freed at once
when nothing pins the object, else by the last unpinner (Python or Java) or the daemon's sweep; the heap and index
stay exactly as Java's own code leaves them, with threads deleting at once, and a process killed half-way through
a delete leaves what Java's recovery finishes."""

import os
import tempfile
import threading
import time

import depot
from depot import _atomics as atomics
from depot._layout import EntryState as ES
from depot._layout import StoreHeaderDescriptor as H
from depot._local_writes import with_state
from conftest import python_child
from test_local_writes import _daemon_requests, _wait_for, assert_heap_sound, client, daemon  # noqa: F401 (fixtures)

I = depot.ObjectId.of


def _pending_deletes(c):
    return atomics.get_long_volatile(c._mapping.base + H.PENDING_DELETES_OFFSET)


def test_a_delete_frees_at_once_without_the_daemon(client, daemon):
    before = client.stat()
    client.put(I("del-now"), b"x" * 100_000, metadata=b"meta")
    requests = _daemon_requests(client)
    assert client.delete(I("del-now")) is True
    assert _daemon_requests(client) == requests
    assert not client.contains(I("del-now"))
    after = client.stat()
    assert (after.object_count, after.used_bytes) == (before.object_count, before.used_bytes)
    client.put(I("del-now"), b"again")  # the id can be used again at once
    with client.get(I("del-now"), timeout=0) as v:
        assert bytes(v.data) == b"again"
    assert_heap_sound(daemon.dir)


def test_a_missing_id_goes_to_the_daemon_which_says_so(client):
    requests = _daemon_requests(client)
    assert client.delete(I("del-never-made")) is False
    assert _daemon_requests(client) == requests + 1
    client.put(I("del-twice"), b"x")
    assert client.delete(I("del-twice")) is True
    assert client.delete(I("del-twice")) is False


def test_a_pinned_object_is_freed_by_the_last_unpin(client, daemon):
    used = client.stat().used_bytes
    client.put(I("del-pinned"), b"p" * 50_000)
    with depot.connect(daemon.dir) as other:
        first = other.get(I("del-pinned"), timeout=0)
        second = client.get(I("del-pinned"), timeout=0)
        assert client.delete(I("del-pinned")) is True
        # Gone for lookups at once; its memory stays while pinned, and the pins still read it.
        assert not client.contains(I("del-pinned")) and not other.contains(I("del-pinned"))
        assert bytes(first.data[:3]) == b"ppp" and bytes(second.data[-3:]) == b"ppp"
        assert client.stat().used_bytes > used
        second.release()
        assert client.stat().used_bytes > used  # another pin is left
        first.release()
        # The last unpinner freed it (the daemon's sweep would take up to a reap interval).
        assert client.stat().used_bytes == used
        assert _pending_deletes(client) == 0
    assert_heap_sound(daemon.dir)


def test_an_unpin_in_another_process_frees_what_this_one_deleted(client, daemon):
    used = client.stat().used_bytes
    client.put(I("del-cross"), b"c" * 200_000)
    with tempfile.TemporaryDirectory() as tmp:
        go = os.path.join(tmp, "release")
        child = python_child("import depot, os, sys, time\n"
                             "c = depot.connect(sys.argv[1])\n"
                             "v = c.get(depot.ObjectId.of('del-cross'), timeout=0)\n"
                             "print('pinned', flush=True)\n"
                             "while not os.path.exists(sys.argv[2]):\n"
                             "    time.sleep(0.01)\n"
                             "assert bytes(v.data[:1]) == b'c'\n"
                             "v.release()\n"
                             "print('released', flush=True)\n"
                             "time.sleep(60)\n", daemon.dir, go)
        with child:
            child.await_line("pinned")
            assert client.delete(I("del-cross")) is True
            assert client.stat().used_bytes > used and _pending_deletes(client) >= 1
            open(go, "w").close()
            child.await_line("released")
            assert _wait_for(lambda: client.stat().used_bytes == used)
    assert_heap_sound(daemon.dir)


def test_threads_delete_at_once(client, daemon):
    count = client.stat().object_count
    names = ["del-thread-%d-%d" % (t, i) for t in range(4) for i in range(150)]
    for n in names:
        client.put(I(n), n.encode() * 50)
    errors = []

    def work(part):
        try:
            for n in part:
                assert client.delete(I(n)) is True
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(names[t::4],)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert client.stat().object_count == count
    assert_heap_sound(daemon.dir)


def test_deletes_and_creates_from_two_processes_interleave(client, daemon):
    child = python_child("import depot, sys\n"
                         "c = depot.connect(sys.argv[1])\n"
                         "for i in range(400):\n"
                         "    oid = depot.ObjectId.of('del-child-%d' % i)\n"
                         "    c.put(oid, bytes([i & 0xFF]) * (1 + i * 37 % 90_000))\n"
                         "    if i % 3:\n"
                         "        assert c.delete(oid)\n"
                         "print('done', flush=True)\n", daemon.dir)
    with child:
        for i in range(400):
            oid = I("del-parent-%d" % i)
            client.put(oid, b"q" * (1 + i * 53 % 70_000))
            if i % 2:
                assert client.delete(oid)
        child.await_line("done", timeout=120)
    for i in range(0, 400, 3):
        with client.get(I("del-child-%d" % i), timeout=0) as v:
            assert set(bytes(v.data)) == {i & 0xFF}
    assert_heap_sound(daemon.dir)


def test_a_process_killed_in_the_middle_of_a_delete_is_finished_by_the_daemon(client, daemon):
    used = client.stat().used_bytes
    client.put(I("del-orphan"), b"o" * 30_000)
    # The child takes the entry to DELETING as its slot (the first step of a delete) and dies before freeing it.
    child = python_child("import depot, sys, time\n"
                         "from depot import _atomics as atomics\n"
                         "from depot._layout import EntryState as ES\n"
                         "from depot._local_writes import with_state\n"
                         "c = depot.connect(sys.argv[1])\n"
                         "raw = bytes(depot.ObjectId.of('del-orphan'))\n"
                         "w = c._writes\n"
                         "slot, _ = c._reader.find_sealed(raw, c._reader.home_of(raw))\n"
                         "word = w._state_word_volatile(slot)\n"
                         "assert w._compare_and_set_state_word(slot, word, with_state(word, w._client, ES.DELETING))\n"
                         "print('deleting', flush=True)\n"
                         "time.sleep(60)\n", daemon.dir)
    with child:
        child.await_line("deleting")
        assert not client.contains(I("del-orphan"))
        assert client.delete(I("del-orphan")) is False  # someone else's delete is under way
        child.kill()
    # The reaper turns a dead client's DELETING into DELETE_PENDING, and the sweep frees it.
    assert _wait_for(lambda: client.stat().used_bytes == used)
    client.put(I("del-orphan"), b"reused")
    assert_heap_sound(daemon.dir)


def test_with_state_keeps_generation_and_flags():
    from depot._local_writes import state_word
    word = state_word(77, 5, ES.SEALED, flags=1)
    assert with_state(word, 9, ES.DELETING) == state_word(77, 9, ES.DELETING, flags=1)
    assert with_state(word, 0, ES.DELETE_PENDING) >> 32 == 77


def test_a_delete_while_this_thread_holds_the_lock_is_left_to_the_sweep(client, daemon):
    # What a finaliser run by a garbage collection inside a create meets: it must neither wait for the lock its
    # own thread holds nor ask the daemon, which would wait for it too.
    used = client.stat().used_bytes
    client.put(I("del-in-critical-section"), b"f" * 10_000)
    lock = client._writes._lock
    assert lock.try_acquire()
    try:
        assert lock.held_by_this_thread() and not lock.try_acquire()
        assert client.delete(I("del-in-critical-section")) is True
        assert not client.contains(I("del-in-critical-section"))
    finally:
        lock.release()
    assert _wait_for(lambda: client.stat().used_bytes == used)  # the daemon's sweep freed it
    assert_heap_sound(daemon.dir)


def test_a_finaliser_that_deletes_during_a_create_does_not_hang(client, daemon):
    import gc
    used = client.stat().used_bytes
    client.put(I("del-finaliser"), b"g" * 10_000)

    class Owner:
        pass

    owner = Owner()
    owner.cycle = owner  # freed only by the cyclic collector, wherever it runs
    import weakref
    weakref.finalize(owner, client.delete, I("del-finaliser"))
    del owner
    lock = client._writes._lock
    assert lock.try_acquire()
    try:
        gc.collect()  # as a collection inside a create would: the finaliser runs under this thread's lock
    finally:
        lock.release()
    assert not client.contains(I("del-finaliser"))
    assert _wait_for(lambda: client.stat().used_bytes == used)
