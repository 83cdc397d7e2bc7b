"""keep=True objects spill to the daemon's spill directory and come back on get; creates that wait for room."""
import os
import threading
import time

import pytest

from conftest import Child, Daemon, java_command
from depot import ObjectId

SIZE = 1 << 20


@pytest.fixture
def spill_daemon(store_dir):
    cmd = java_command("dev.depot.server.DaemonMain", "--dir", store_dir, "--capacity", 8 << 20,
                       "--spill-dir", os.path.join(store_dir, "spill"))
    d = Daemon(store_dir, Child(cmd))
    try:
        d.child.await_line("depot: serving", timeout=60)
        yield d
    finally:
        d.stop()


def payload(i):
    return bytes([(i * 7 + j) & 0xff for j in range(256)]) * (SIZE // 256)


def test_keep_objects_spill_when_full_and_come_back_byte_exact(spill_daemon):
    import depot
    with depot.connect(spill_daemon.dir) as c:
        for i in range(16):
            c.put(ObjectId.of("keep-%d" % i), payload(i), metadata=b"m", keep=True)
        spilled = sum(1 for o in c.list() if o.state == "spilled")
        assert spilled > 0
        s = c.stat()
        assert (s.spilled_objects, s.kept_objects, s.restore_count) == (spilled, 16 - spilled, 0), s
        assert s.spill_count >= spilled and s.spilled_bytes >= spilled * SIZE and s.kept_bytes >= s.kept_objects * SIZE
        assert s.spill_directory == os.path.abspath(os.path.join(spill_daemon.dir, "spill"))
        for i in range(16):
            with c.get(ObjectId.of("keep-%d" % i), timeout=60) as v:
                assert bytes(v.data) == payload(i)
                assert v.metadata == b"m"
        assert c.stat().restore_count >= spilled


def test_create_without_eviction_waits_for_a_delete_from_another_client(spill_daemon):
    import depot
    with depot.connect(spill_daemon.dir) as a, depot.connect(spill_daemon.dir) as b:
        a.put(ObjectId.of("big"), bytes(6 << 20))
        done = []

        def create():
            b.put(ObjectId.of("next"), bytes(6 << 20), evict=False, timeout=None)
            done.append(True)

        t = threading.Thread(target=create, daemon=True)
        t.start()
        t.join(0.2)
        a.delete(ObjectId.of("big"))
        t.join(60)
        assert done == [True]
        assert b.contains(ObjectId.of("next"))


def test_create_without_eviction_times_out_with_store_full(spill_daemon):
    import depot
    with depot.connect(spill_daemon.dir) as c:
        c.put(ObjectId.of("big"), bytes(6 << 20))
        with pytest.raises(depot.StoreFullError):
            c.put(ObjectId.of("next"), bytes(6 << 20), evict=False, timeout=0.05)


def _spilled_with_file(c, spill_dir):
    """The id and spill file of one spilled object, once the spiller has renamed its file into place."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for o in c.list():
            if o.state == "spilled":
                names = [n for n in os.listdir(spill_dir) if n.startswith(o.id.hex()) and n.endswith(".spill")]
                if names:
                    return o.id, os.path.join(spill_dir, names[0])
        time.sleep(0.01)
    raise AssertionError("no spilled object with a whole file in %s within 30 s" % spill_dir)


@pytest.mark.parametrize("damage", ["flipped data byte", "truncated", "missing"])
def test_get_of_a_damaged_spilled_object_fails_at_once_with_the_damage_and_never_serves_it(spill_daemon, damage):
    import depot
    spill_dir = os.path.join(spill_daemon.dir, "spill")
    with depot.connect(spill_daemon.dir) as c:
        for i in range(16):
            c.put(ObjectId.of("keep-%d" % i), payload(i), keep=True)
        oid, path = _spilled_with_file(c, spill_dir)
        if damage == "flipped data byte":
            with open(path, "r+b") as f:
                f.seek(64 + SIZE // 3)
                b = f.read(1)
                f.seek(64 + SIZE // 3)
                f.write(bytes([b[0] ^ 1]))
            expected = "its CRC32C is 0x"
        elif damage == "truncated":
            os.truncate(path, 64 + SIZE // 2)
            expected = "(truncated)"
        else:
            os.unlink(path)
            expected = "it is missing"
        # Without word of the failure, this would end after 30 s with ObjectMissingError.
        with pytest.raises(depot.ObjectLostError) as e:
            c.get(oid, timeout=30)
        message = str(e.value)
        assert message.startswith("object %s could not be restored from the spill directory " % oid.hex()), message
        assert "spill file %s is damaged: " % os.path.basename(path) in message and expected in message, message
        assert "put it again" in message, message
        with pytest.raises(depot.ObjectMissingError):
            c.get(oid, timeout=0)
        assert c.stat().spill_failure_count >= 1
