"""Notifications: a Python subscriber sees what Java seals in its own process and what Python writes through the
daemon, a Java subscriber sees Python's writes, overflow is reported with its count, a killed subscriber's slot
is freed, and socket-free gets are counted in the client's slot. No timing assertions."""

import os
import time

import pytest

import depot
from conftest import Child, class_path, java_executable, python_child
from depot import _atomics as atomics
from depot._layout import ClientTableDescriptor as CT
from depot._layout import NotificationDescriptor as ND

NOTES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "java", "Notes.java")


def _java(*args):
    java, cp = java_executable(), class_path()
    if java is None or cp is None:
        pytest.skip("needs a JDK 25 and the built Java modules")
    return Child([java, "--enable-native-access=ALL-UNNAMED", "-Xmx128m", "-cp", cp, NOTES] + [str(a) for a in args])


@pytest.fixture
def shared_client(shared_daemon):
    c = depot.connect(shared_daemon.dir)
    try:
        yield c
    finally:
        c.close()


def _subscribers(client):
    m = client._mapping
    base = m.base + m.notification_offset + ND.REGION_HEADER_LENGTH
    return sum(1 for r in range(ND.SUBSCRIBERS) if atomics.get_long_volatile(base + r * ND.RING_LENGTH + ND.OWNER_OFFSET))


def _until(condition, what, seconds=30):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def test_python_subscriber_sees_an_object_java_sealed_in_its_own_process(shared_client, shared_daemon):
    with shared_client.subscribe() as events:
        with _java("seal", shared_daemon.dir, "from-java", 777) as java:
            java.await_line("sealed", timeout=120)
            event = events.next(timeout=60)
        assert (event.type, event.id, event.data_size, event.metadata_size) == (
            "sealed", depot.ObjectId.of("from-java"), 777, 0)
        assert event.pid == java.proc.pid
        assert events.next(timeout=0) is None


def test_java_subscriber_sees_what_python_writes_and_deletes_in_shared_memory(shared_client, shared_daemon):
    with _java("watch", shared_daemon.dir, 2) as java:
        java.await_line("subscribed", timeout=120)
        oid = depot.ObjectId.of("from-python")
        shared_client.put(oid, b"x" * 55)
        shared_client.delete(oid)
        # Python sealed and deleted it itself (no daemon on the way): both events name this process.
        assert java.await_line("SEALED", timeout=60) == "SEALED %s 55 %d" % (oid.hex(), os.getpid())
        assert java.await_line("DELETED", timeout=60) == "DELETED %s 55 %d" % (oid.hex(), os.getpid())
        # A missing id still goes to the daemon, which publishes nothing for it.
        assert shared_client.delete(oid) is False


def test_iterating_yields_events_in_order_and_a_full_buffer_is_reported_as_missed(shared_client):
    with shared_client.subscribe() as events:
        pairs = 300  # 600 events into a buffer of ND.RING_RECORDS, read only afterwards
        for i in range(pairs):
            oid = depot.ObjectId.of("overflow-%d" % i)
            shared_client.put(oid, b"y")
            shared_client.delete(oid)
        types = []
        missed = 0
        while True:
            event = events.next(timeout=0)
            if event is None:
                break
            if event.type == "missed":
                missed += event.missed
                assert len(types) == ND.RING_RECORDS, "reported after the events the buffer held"
            else:
                types.append(event.type)
        assert types == ["sealed", "deleted"] * (ND.RING_RECORDS // 2)
        assert missed == 2 * pairs - ND.RING_RECORDS
        shared_client.put(depot.ObjectId.of("after-overflow"), b"z")
        assert next(iter(events)).id == depot.ObjectId.of("after-overflow")


def test_a_subscriber_killed_with_sigkill_frees_its_slot(shared_client):
    assert _subscribers(shared_client) == 0
    code = ("import sys, time, depot\n"
            "c = depot.connect(sys.argv[1])\n"
            "s = c.subscribe()\n"
            "print('subscribed', flush=True)\n"
            "time.sleep(600)\n")
    with python_child(code, shared_client.directory) as child:
        child.await_line("subscribed", timeout=60)
        assert _subscribers(shared_client) == 1
        child.kill()
    _until(lambda: _subscribers(shared_client) == 0, "the daemon did not free the killed subscriber's slot")


def test_every_slot_taken_is_a_clear_error_and_closing_frees_one(shared_client):
    taken = [shared_client.subscribe() for _ in range(ND.SUBSCRIBERS)]
    with pytest.raises(depot.ResourceLimitError, match="all 16 subscriber slots taken"):
        shared_client.subscribe()
    taken.pop().close()
    taken.append(shared_client.subscribe())
    for s in taken:
        s.close()
    assert _subscribers(shared_client) == 0
    with pytest.raises(depot.ClientClosedError):
        taken[0].next(timeout=0)


def test_socket_free_gets_count_in_the_clients_own_slot(shared_client):
    oid = depot.ObjectId.of("counted")
    shared_client.put(oid, b"c" * 10)
    gets = shared_client._slot.address + CT.GETS_OFFSET
    before = atomics.get_long_volatile(gets)
    for _ in range(5):
        with shared_client.get(oid, timeout=0):
            pass
    assert atomics.get_long_volatile(gets) - before == 5
