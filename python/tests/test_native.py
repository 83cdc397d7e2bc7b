"""The C extension depot._native against the ctypes path: the same atomics with the same results, the same pin
protocol with the same pins and errors, bounds checks on what it reads; and the ctypes path chosen when the
extension is disabled (DEPOT_NATIVE=0) or missing.

The extension under test is the one this process imports when it is built (installed, or built in place);
else it is compiled here by python/setup.py (from the sources it lists, in python/native/), and the tests skip only
without a C compiler.
"""

import ctypes
import importlib.util
import os
import subprocess
import sys
import sysconfig

import pytest

import depot
from depot import _accel
from depot import _ctypes_atomics as ctypes_atomics
from depot._index import IndexReader
from depot._layout import ClientTableDescriptor as CT
from depot._layout import EntryState as ES
from depot._layout import IndexEntryDescriptor as IE
from depot.errors import StoreFormatError

from conftest import child_env

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(depot.__file__)))
MASK64 = (1 << 64) - 1


@pytest.fixture(scope="module")
def native(tmp_path_factory):
    if _accel.native is not None:
        return _accel.native
    if not os.path.exists(os.path.join(PYTHON_DIR, "native", "native.h")):
        pytest.skip("no source of depot._native beside the package (an installed copy without the extension)")
    build = tmp_path_factory.mktemp("native")
    result = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--build-lib", str(build / "lib"),
                             "--build-temp", str(build / "temp")], cwd=PYTHON_DIR, capture_output=True, text=True)
    path = build / "lib" / "depot" / ("_native" + sysconfig.get_config_var("EXT_SUFFIX"))
    if not path.exists():
        pytest.skip("depot._native cannot be compiled here (no C compiler?): %s" % result.stdout[-500:])
    spec = importlib.util.spec_from_file_location("depot._native", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.configure(_accel.layout_table(), StoreFormatError)
    return module


class Words:
    """Two aligned buffers of 64-bit words, one per implementation, filled alike."""

    def __init__(self, values):
        self.a = (ctypes.c_uint64 * len(values))(*values)
        self.b = (ctypes.c_uint64 * len(values))(*values)

    def at(self, which, index, width=8):
        return ctypes.addressof(self.a if which == 0 else self.b) + index * width

    def same(self):
        return list(self.a) == list(self.b)


EDGES = [0, 1, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF, 1 << 32, (1 << 63) - 1, 1 << 63, MASK64]


@pytest.mark.parametrize("value", EDGES)
def test_native_atomics_return_what_the_ctypes_ones_return(native, value):
    words = Words([value, value ^ 0x5555, value, value])
    impls = (ctypes_atomics, native)
    results = []
    for i, impl in enumerate(impls):
        r = [impl.get_long_acquire(words.at(i, 0)), impl.get_long_volatile(words.at(i, 0)),
             impl.get_long_opaque(words.at(i, 1)), impl.get_int_acquire(words.at(i, 1, 4)),
             impl.get_int_volatile(words.at(i, 2, 4)),
             impl.compare_and_set_long(words.at(i, 0), value, value ^ 1),
             impl.compare_and_set_long(words.at(i, 0), value, 7),
             impl.compare_and_set_int(words.at(i, 4, 4), value & 0xFFFF_FFFF, 3),
             impl.compare_and_set_int(words.at(i, 4, 4), 1 ^ value & 0xFFFF_FFFF, 5),
             impl.get_and_add_long(words.at(i, 1), -1), impl.get_and_add_long(words.at(i, 1), 2),
             impl.get_and_add_int(words.at(i, 6, 4), -1), impl.get_and_add_int(words.at(i, 6, 4), 1 << 31)]
        impl.put_long_volatile(words.at(i, 2), value)
        impl.put_long_release(words.at(i, 3), value ^ 2)
        impl.put_long_opaque(words.at(i, 1), value >> 1)
        impl.put_int_volatile(words.at(i, 5, 4), value & 0xFFFF_FFFF)
        impl.put_int_release(words.at(i, 7, 4), (value >> 3) & 0xFFFF_FFFF)
        impl.put_int_opaque(words.at(i, 6, 4), 9)
        results.append(r)
    assert results[0] == results[1]
    assert words.same(), (list(words.a), list(words.b))


def test_native_atomics_refuse_what_the_ctypes_ones_refuse(native):
    words = Words([0])
    for i, impl in enumerate((ctypes_atomics, native)):
        with pytest.raises(TypeError):
            impl.get_long_acquire()
        with pytest.raises(TypeError):
            impl.put_long_volatile(words.at(i, 0))
        with pytest.raises(TypeError):
            impl.compare_and_set_long(words.at(i, 0), "0", 1)


def test_native_futex_returns_on_a_changed_word_and_at_the_timeout(native):
    word = (ctypes.c_uint32 * 1)(5)
    for impl in (ctypes_atomics, native):
        impl.futex_wait(ctypes.addressof(word), 4, None)   # not 4: back at once
        impl.futex_wait(ctypes.addressof(word), 5, 0.001)  # 5: back at the timeout
        impl.futex_wake(ctypes.addressof(word), 1)
        impl.futex_wake_all(ctypes.addressof(word))


def test_configure_refuses_a_layout_without_a_field_it_reads_and_keeps_the_one_it_had(native):
    table = _accel.layout_table()
    del table["IndexEntryDescriptor.DATA_LENGTH_OFFSET"]
    with pytest.raises(KeyError, match="IndexEntryDescriptor.DATA_LENGTH_OFFSET"):
        native.configure(table, StoreFormatError)
    native.configure(_accel.layout_table(), StoreFormatError)


# ---- the pin protocol, on a live store ------------------------------------------------------------------------

def _slot_of(native, client):
    m = client._mapping
    slot = client._slot
    return native.Slot(m, m.base, m.file_length, m.index_offset, m.index_slots, m.heap_offset, m.heap_length,
                       slot.address - m.base, slot.capacity, m.path)


def _ctypes_located(client, monkeypatch, raw):
    """What the ctypes path's try_pin finds for ``raw``: (record, data offset, size, metadata) or None."""
    with monkeypatch.context() as patch:
        patch.setattr(client._slot, "native", None)
        located = IndexReader(client._mapping, client._slot).try_pin(raw)
        if located is None:
            return None
        try:
            return (located.pin.record, located.data_offset, located.size,
                    client._mapping.read(located.metadata_offset, located.metadata_length))
        finally:
            located.pin.release()


def test_native_pin_finds_and_pins_what_the_ctypes_path_finds(native, client, monkeypatch):
    oid, other = depot.ObjectId.of("native/pin"), depot.ObjectId.of("native/missing")
    client.put(oid, b"x" * 3000, metadata=b"meta")
    slot = _slot_of(native, client)
    expected = _ctypes_located(client, monkeypatch, oid._bytes)
    position = client._slot.take_position()
    try:
        got = slot.pin(oid._bytes, position)
        assert got == expected
        assert bytes(client._mapping.mm[got[1]:got[1] + got[2]]) == b"x" * 3000
        assert {i.id: i.pin_count for i in client.list()}[oid] == 1  # the daemon sees the record
        assert slot.release(position, got[0], True) == 0
        assert {i.id: i.pin_count for i in client.list()}[oid] == 0
        assert slot.pin(other._bytes, position) is None
        assert _ctypes_located(client, monkeypatch, other._bytes) is None
    finally:
        client._slot.give_back(position)


def test_native_release_hands_a_delete_it_held_back_to_the_caller(native, client):
    oid = depot.ObjectId.of("native/deferred")
    client.put(oid, b"y" * 100)
    slot = _slot_of(native, client)
    position = client._slot.take_position()
    try:
        record = slot.pin(oid._bytes, position)[0]
        assert client.delete(oid)  # deferred: pinned
        word = slot.release(position, record, False)
        assert word & 0xFF == ES.DELETE_PENDING and word >> IE.GENERATION_SHIFT == record & 0xFFFFFFFF
        client._writes.finish_pending_delete((record >> 32) - 1, word)
    finally:
        client._slot.give_back(position)
    assert not client.contains(oid)


def test_native_slot_refuses_positions_records_and_ids_outside_its_bounds(native, client):
    slot = _slot_of(native, client)
    capacity = client._slot.capacity
    with pytest.raises(IndexError, match="pin position %d is outside the %d pin records" % (capacity, capacity)):
        slot.pin(depot.ObjectId.of("a")._bytes, capacity)
    with pytest.raises(IndexError, match="names index slot %d, outside the %d slots"
                       % (client._mapping.index_slots, client._mapping.index_slots)):
        slot.release(0, (client._mapping.index_slots + 1) << 32, False)
    with pytest.raises(IndexError, match="names index slot -1"):
        slot.publish(0, 7)
    with pytest.raises(TypeError, match="an object id is 20 bytes"):
        slot.pin(b"short", 0)
    m = client._mapping
    with pytest.raises(ValueError, match="a client slot of 9 pin records at %d does not fit the %d-byte mapping"
                       % (m.file_length - 64, m.file_length)):
        native.Slot(m, m.base, m.file_length, m.index_offset, m.index_slots, m.heap_offset, m.heap_length,
                    m.file_length - 64, 9, m.path)
    with pytest.raises(ValueError, match="an index of 3 slots"):
        native.Slot(m, m.base, m.file_length, m.index_offset, 3, m.heap_offset, m.heap_length, 0, 1, m.path)


def test_a_corrupt_entry_raises_the_same_error_on_both_paths_and_leaves_no_pin(native, client, monkeypatch):
    oid = depot.ObjectId.of("native/corrupt")
    client.put(oid, b"z" * 64)
    m = client._mapping
    record = _ctypes_located(client, monkeypatch, oid._bytes)[0]
    entry = m.index_offset + ((record >> 32) - 1) * IE.ENTRY_LENGTH
    block_at = entry + IE.BLOCK_OFFSET_OFFSET
    saved = bytes(m.mm[block_at:block_at + 8])
    m.mm[block_at:block_at + 8] = (m.heap_length + 64).to_bytes(8, "little")
    try:
        messages = []
        with monkeypatch.context() as patch:
            patch.setattr(client._slot, "native", None)
            with pytest.raises(StoreFormatError) as e:
                IndexReader(m, client._slot).try_pin(oid._bytes)
            messages.append(str(e.value))
        slot = _slot_of(native, client)
        position = client._slot.take_position()
        try:
            with pytest.raises(StoreFormatError) as e:
                slot.pin(oid._bytes, position)
            messages.append(str(e.value))
        finally:
            client._slot.give_back(position)
        assert messages[0] == messages[1]
        assert "block %d" % (m.heap_length + 64) in messages[0] and "%d-byte heap" % m.heap_length in messages[0]
        high_water = min(ctypes_atomics.get_int_acquire(client._slot.address + CT.PIN_HIGH_WATER_OFFSET),
                         client._slot.capacity)
        records = client._slot.address + CT.PIN_RECORDS_OFFSET
        assert [ctypes_atomics.get_long_volatile(records + 8 * r) for r in range(high_water)] == [0] * high_water
    finally:
        m.mm[block_at:block_at + 8] = saved
    assert client.get(oid, timeout=0).to_bytes() == b"z" * 64


def test_native_allocate_leaves_the_heap_as_the_python_allocator_does(native, client):
    """Under the allocator lock, from the same heap (a store with holes of several sizes): the same offset and the
    same bytes in the header and the heap after each allocation, small and large, fitting or not."""
    from depot._allocator import HeapAllocator, block_size_for
    from depot._layout import StoreHeaderDescriptor as H
    for i in range(40):
        client.put(depot.ObjectId.of("native/heap/%d" % i), b"h" * (100 + 997 * i))
    for i in range(0, 40, 3):
        assert client.delete(depot.ObjectId.of("native/heap/%d" % i))
    m = client._mapping
    python, c = HeapAllocator(m), HeapAllocator(m, _slot_of(native, client))
    lock = client._writes._lock
    sizes = [block_size_for(n, 0) for n in (1, 100, 3000, 20_000, 70_000, 5 << 20)] + [m.heap_length + 64, 0, 100]
    regions = [(H.FREE_BINS_OFFSET, H.FREE_BINS * 8), (H.USED_BYTES_OFFSET, 8), (m.heap_offset, m.heap_length)]
    assert lock.try_acquire()
    try:
        before = [bytes(m.mm[o:o + n]) for o, n in regions]
        for size in sizes:
            results = []
            for allocator in (python, c):
                for (o, n), saved in zip(regions, before):
                    m.mm[o:o + n] = saved
                offset = allocator.allocate(size)
                results.append((offset, [bytes(m.mm[o:o + n]) for o, n in regions]))
            assert results[0][0] == results[1][0], size
            assert results[0][1] == results[1][1], size
        for (o, n), saved in zip(regions, before):
            m.mm[o:o + n] = saved
    finally:
        lock.release()
    for i in range(40):
        client.delete(depot.ObjectId.of("native/heap/%d" % i))


def test_native_allocate_refuses_a_free_list_pointing_outside_the_heap(native, client):
    from depot._allocator import HeapAllocator
    from depot._layout import StoreHeaderDescriptor as H
    m = client._mapping
    allocator = HeapAllocator(m, _slot_of(native, client))
    lock = client._writes._lock
    head = H.FREE_BINS_OFFSET + 8 * 7  # the bin of 128-byte blocks
    assert lock.try_acquire()
    saved = bytes(m.mm[head:head + 8])
    try:
        m.mm[head:head + 8] = (m.heap_length + 4096).to_bytes(8, "little")
        with pytest.raises(StoreFormatError, match="free-list head %d, outside the %d-byte heap"
                           % (m.heap_length + 4096, m.heap_length)):
            allocator.allocate(128)
    finally:
        m.mm[head:head + 8] = saved
        lock.release()


def test_native_probe_for_create_finds_what_the_python_walk_finds(native, client, monkeypatch):
    ids = [depot.ObjectId.of("native/probe/%d" % i) for i in range(30)]
    for oid in ids:
        client.put(oid, b"p")
    for oid in ids[::4]:
        assert client.delete(oid)  # tombstones on the chains
    slot, writes, reader = _slot_of(native, client), client._writes, client._reader
    asked = ids + [depot.ObjectId.of("native/probe/missing/%d" % i) for i in range(10)]
    assert writes._lock.try_acquire()
    try:
        for oid in asked:
            home = reader.home_of(oid._bytes)
            assert slot.probe_for_create(oid._bytes) == writes._find_blocking_or_free(oid._bytes, home) + (home,)
        # an unknown state code on the chain is a corrupt entry, on both paths alike
        record = _ctypes_located(client, monkeypatch, ids[1]._bytes)[0]
        word_at = client._mapping.base + client._mapping.index_offset + ((record >> 32) - 1) * IE.ENTRY_LENGTH
        word = ctypes_atomics.get_long_volatile(word_at)
        ctypes_atomics.put_long_volatile(word_at, word & ~0xFF | 0x7E)
        try:
            messages = []
            for probe in (lambda: writes._find_blocking_or_free(ids[1]._bytes, reader.home_of(ids[1]._bytes)),
                          lambda: slot.probe_for_create(ids[1]._bytes)):
                with pytest.raises(StoreFormatError, match="unknown state code 126") as e:
                    probe()
                messages.append(str(e.value))
            assert messages[0] == messages[1]
        finally:
            ctypes_atomics.put_long_volatile(word_at, word)
    finally:
        writes._lock.release()


@pytest.mark.parametrize("keep", [False, True])
def test_native_create_writes_the_entry_block_and_counters_the_python_create_writes(native, client, keep):
    from depot._layout import StoreHeaderDescriptor as H
    for i in range(12):
        client.put(depot.ObjectId.of("native/create/%d" % i), b"c" * (500 * i))
    for i in range(0, 12, 3):
        assert client.delete(depot.ObjectId.of("native/create/%d" % i))
    m, writes = client._mapping, client._writes
    slot = _slot_of(native, client)
    index = (m.index_offset, m.index_slots * IE.ENTRY_LENGTH)
    regions = [(H.FREE_BINS_OFFSET, H.FREE_BINS * 8), (H.USED_BYTES_OFFSET, 8), (H.OBJECT_COUNT_OFFSET, 8),
               (H.KEPT_BYTES_OFFSET, 16), index, (m.heap_offset, m.heap_length)]
    raw = depot.ObjectId.of("native/create/new")._bytes
    assert writes._lock.try_acquire()
    try:
        before = [bytes(m.mm[o:o + n]) for o, n in regions]
    finally:
        writes._lock.release()
    results = []
    for native_path in (False, True):
        saved = writes._native, writes._allocator._native
        writes._native = writes._allocator._native = slot if native_path else None
        try:
            created = writes.try_create(raw, 3000, b"some metadata", keep)
        finally:
            writes._native, writes._allocator._native = saved
        assert writes._lock.try_acquire()
        try:
            after = [bytearray(m.mm[o:o + n]) for o, n in regions]
            entry = created.index_slot * IE.ENTRY_LENGTH
            after[4][entry + IE.CREATE_TIME_OFFSET:entry + IE.ENTRY_LENGTH] = bytes(16)  # times differ
            for (o, n), saved_bytes in zip(regions, before):
                m.mm[o:o + n] = saved_bytes
        finally:
            writes._lock.release()
        results.append(((created.index_slot, created.generation, created.flags, created.data_offset,
                         created.metadata_length, created.home), after))
    assert results[0][0] == results[1][0]
    assert [bytes(r) for r in results[0][1]] == [bytes(r) for r in results[1][1]]
    with pytest.raises(depot.ObjectExistsError, match="exists already"):
        writes.try_create(depot.ObjectId.of("native/create/1")._bytes, 10, b"", False)


# ---- choosing the path ----------------------------------------------------------------------------------------

_PROBE = """
import sys
if sys.argv[2] == "missing":
    sys.modules["depot._native"] = None  # as where it was never built
import depot, depot._accel as accel, depot._atomics as atomics, depot._ctypes_atomics as c
try:
    import depot._native as n
except ImportError:
    n = None
ctypes_path = accel.native is None
assert (atomics.get_long_acquire is c.get_long_acquire) == ctypes_path
with depot.connect(sys.argv[1]) as client:
    assert (client._slot.native is None) == ctypes_path
    oid = depot.ObjectId.random()
    client.put(oid, b"over " + sys.argv[2].encode())
    with client.get(oid, timeout=0) as view:
        got = bytes(view.data)
    assert client.delete(oid)
print("ctypes" if ctypes_path else "native", got.decode())
"""


def _probe(directory, choice, setting):
    env = child_env()
    env.pop(_accel.NATIVE_ENV_NAME, None)
    if setting is not None:
        env[_accel.NATIVE_ENV_NAME] = setting
    return subprocess.run([sys.executable, "-c", _PROBE, directory, choice], env=env, capture_output=True, text=True,
                          timeout=120)


def test_depot_native_0_runs_the_client_on_ctypes(daemon):
    result = _probe(daemon.dir, "present", "0")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ctypes over present"


def test_without_the_extension_the_client_runs_on_ctypes_unless_it_is_asked_for(daemon):
    result = _probe(daemon.dir, "missing", None)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ctypes over missing"
    result = _probe(daemon.dir, "missing", "1")
    assert result.returncode != 0
    assert "DEPOT_NATIVE=1 asks for the C extension depot._native, which is not built here" in result.stderr


def test_an_installed_or_built_extension_is_used_by_default(daemon):
    if _accel.native is None:
        pytest.skip("depot._native is not importable in this process (not built in place or installed)")
    result = _probe(daemon.dir, "present", None)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "native over present"
