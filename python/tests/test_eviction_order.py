"""Eviction order across processes: objects read after others were written survive the puts that need room."""

import pytest

import depot
from conftest import python_child

MIB = 1 << 20

# Puts objects of 5 MiB named by argv[3:] (the daemon evicts when a put needs room), then says so.
WRITER = """
import sys, depot
with depot.connect(sys.argv[1]) as c:
    for name in sys.argv[3:]:
        c.put(depot.ObjectId.of(name), bytes([len(name)]) * int(sys.argv[2]))
print("put", flush=True)
"""


def _put_in_child(store, names):
    with python_child(WRITER, store, 5 * MIB, *names) as child:
        child.await_line("put", timeout=60)
        assert child.proc.wait(timeout=30) == 0


def _read_with_get(client, names):
    for name in names:
        with client.get(depot.ObjectId.of(name), timeout=0) as view:
            assert view.data[0] == len(name)


def _read_with_get_many(client, names):
    views = client.get_many([depot.ObjectId.of(n) for n in names], timeout=0)
    for name, view in zip(names, views):
        assert view.data[0] == len(name)
        view.release()


@pytest.mark.parametrize("read", [_read_with_get, _read_with_get_many], ids=["get", "get_many"])
def test_objects_read_after_others_were_written_survive_the_puts_that_need_room(daemon, client, read):
    # A fresh 64 MiB store: ten 5 MiB objects fit, four more need room.
    first = ["old-%d" % i for i in range(10)]
    _put_in_child(daemon.dir, first)
    read(client, first[:2])
    later = ["new-%d" % i for i in range(4)]
    _put_in_child(daemon.dir, later)
    evicted = client.stat().eviction_count
    assert evicted > 0, "the four puts needed room"
    survived = [client.contains(depot.ObjectId.of(n)) for n in first]
    assert survived[:2] == [True, True], "the two objects read survive: %r" % survived
    # the unread ones go oldest first
    assert survived[2:] == [i >= evicted for i in range(8)], "%d evicted: %r" % (evicted, survived)
    assert all(client.contains(depot.ObjectId.of(n)) for n in later)
