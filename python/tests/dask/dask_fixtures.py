"""Fixtures for the depot.dask tests (imported by each test module): one daemon and one two-worker scheduler for
the whole session (workers take seconds to start), both always stopped; tests check that the store holds
nothing of theirs afterwards."""

import gc
import os
import shutil
import time
import uuid

import pytest

pytest.importorskip("dask", reason="depot.dask needs Dask (python3-dask, or pip install dask)")
pytest.importorskip("numpy", reason="the depot.dask tests use NumPy")

from conftest import Child, Daemon, java_command  # noqa: E402  (python/tests/conftest.py)

CAPACITY = 512 << 20


class _Shared:
    """One daemon and one scheduler for every test module that imports these fixtures (pytest makes a session
    fixture per importing module; they share these, and the last one to finish stops them)."""

    users = 0
    daemon = None
    scheduler = None
    path = None

    @classmethod
    def acquire(cls):
        if cls.users == 0:
            import depot.dask
            cls.path = os.path.join("/dev/shm", "depot-test-" + uuid.uuid4().hex)
            try:
                cls.daemon = Daemon(cls.path, Child(java_command("dev.depot.server.DaemonMain", "--dir", cls.path,
                                                                 "--capacity", CAPACITY)))
                cls.daemon.child.await_line("depot: serving", timeout=60)
                cls.scheduler = depot.dask.Scheduler(workers=2, dir=cls.path, inline_bytes=4096)
            except BaseException:
                cls.users = 1
                cls.release()
                raise
        cls.users += 1

    @classmethod
    def release(cls):
        cls.users -= 1
        if cls.users > 0:
            return
        try:
            if cls.scheduler is not None:
                cls.scheduler.close()
        finally:
            cls.scheduler = None
            if cls.daemon is not None:
                cls.daemon.stop()
            cls.daemon = None
            shutil.rmtree(cls.path, ignore_errors=True)


@pytest.fixture(scope="session")
def dask_daemon():
    _Shared.acquire()
    try:
        yield _Shared.daemon
    finally:
        _Shared.release()


@pytest.fixture(scope="session")
def scheduler(dask_daemon):
    return _Shared.scheduler


SETTLE_SECONDS = 30
#: states of an object on its way out: deleted while pinned (freed once the pins go), and being freed (a list can
#: see one between the daemon's two steps)
SETTLING_STATES = ("delete_pending", "deleting")


def store_objects(directory, prefix=b""):
    """The objects in the store whose ids start with ``prefix``, once garbage is collected. Objects deleted while
    pinned are freed by the daemon after their last pin goes (it learns of releases that never crossed the
    socket a moment later), so those still pending or being freed are waited for, up to a deadline."""
    from depot.dask._objects import shared_client
    gc.collect()
    c = shared_client(directory)
    c.flush()
    deadline = time.monotonic() + SETTLE_SECONDS
    while True:
        left = [i for i in c.list() if bytes(i.id).startswith(prefix)]
        if not any(i.state in SETTLING_STATES for i in left) or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def pinners(directory):
    """``{object id: [pid of each process whose client slot pins it]}``, read from the store's client table (what
    a leftover delete_pending object waits for). The table is shared memory: a slot's high-water mark is clamped
    to the slot's capacity, as Java's ``ClientTable`` does, and a record naming no index slot is reported as such."""
    from depot._layout import ClientTableDescriptor as CT
    from depot._layout import IndexEntryDescriptor as IE
    from depot._mapping import open_mapping
    m = open_mapping(directory)
    out = {}
    for c in range(m.max_clients):
        slot = m.client_table_offset + c * m.slot_length
        identity = m.u64(slot + CT.IDENTITY_OFFSET)
        if identity == 0:
            continue
        for r in range(min(m.u32(slot + CT.PIN_HIGH_WATER_OFFSET), m.pins_per_client)):
            record = m.u64(slot + CT.PIN_RECORDS_OFFSET + r * CT.PIN_RECORD_LENGTH)
            if record == 0:
                continue
            index_slot = (record >> 32) - 1
            if not 0 <= index_slot < m.index_slots:
                raw = b"bad record %#x at %d of client %d (index has %d slots)" % (record, r, c, m.index_slots)
            else:
                entry = m.index_offset + index_slot * IE.ENTRY_LENGTH
                raw = bytes(m.mm[entry + IE.ID_OFFSET:entry + IE.ID_OFFSET + IE.ID_LENGTH])
            out.setdefault(raw, []).append(identity >> 32)
    return out


@pytest.fixture
def clean_store(dask_daemon, scheduler):
    """Asserts that the test left no object of the scheduler (nor anything else) in the store."""
    yield dask_daemon.dir
    left = store_objects(dask_daemon.dir, scheduler._pool.token)
    if left:
        pins = pinners(dask_daemon.dir)
        raise AssertionError("the scheduler left objects in the store: %r; pinned by (pids) %r; this process is %d, "
                             "the workers are %r" % (left, {bytes(i.id).hex(): pins.get(bytes(i.id)) for i in left},
                                                     os.getpid(), scheduler._pool.pids()))
