"""put_object / get_object: any picklable object, its large buffers zero-copy in shared memory."""

import gc
import pickle

import pytest

import depot
from depot import pickling


@pytest.fixture
def client(shared_daemon):
    c = depot.connect(shared_daemon.dir)
    try:
        yield c
    finally:
        c.close()


@pytest.fixture
def ids(request):
    """Object ids unique to the test (the tests share one daemon)."""
    return lambda name: depot.ObjectId.of(request.node.name + "/" + name)


def _pins(client, oid):
    client.flush()
    return next(info.pin_count for info in client.list() if info.id == oid)


def test_plain_objects_round_trip_without_numpy(client, ids):
    oid = ids("plain")
    value = {"a": [1, 2.5, "three"], "b": (None, True), "blob": b"x" * 5000, "small": b"yz",
             "mutable": bytearray(b"m" * 3000), "view": memoryview(b"v" * 100)}
    client.put_object(oid, value)
    got = client.get_object(oid, timeout=1.0)
    assert got["a"] == value["a"] and got["b"] == value["b"]
    assert type(got["blob"]) is bytes and got["blob"] == value["blob"]
    assert type(got["mutable"]) is bytearray and got["mutable"] == value["mutable"]
    assert isinstance(got["view"], memoryview) and got["view"].readonly and got["view"] == b"v" * 100
    assert got["small"] == b"yz"


def test_large_bytes_are_stored_out_of_band_once(client, ids):
    oid = ids("out-of-band")
    blob = bytes(range(256)) * 64
    client.put_object(oid, [blob, blob])
    with client.get(oid, timeout=1.0) as view:
        layout = pickling.read_layout(view.data)
        assert [(length, kind) for _, length, kind in layout.buffers] == [(len(blob), pickling.KIND_BYTES)]
        offset = layout.buffers[0][0]
        assert offset % 64 == 0 and bytes(view.data[offset:offset + len(blob)]) == blob
        assert layout.stream[1] < 200  # the stream refers to the buffer, it does not hold it
    first, second = client.get_object(oid, timeout=1.0)
    assert first == blob and second is first


def test_object_with_no_buffers_is_released_at_once(client, ids):
    oid = ids("no-buffers")
    client.put_object(oid, ("tuple", 1), metadata=b"app", keep=True, timeout=1.0)
    assert client.get_object(oid, timeout=1.0) == ("tuple", 1)
    assert _pins(client, oid) == 0


def test_memoryview_is_a_view_of_shared_memory_pinned_until_collected(client, ids):
    oid = ids("pinned-view")
    client.put_object(oid, memoryview(b"q" * 4096))
    got = client.get_object(oid, timeout=1.0)
    part = got[10:20]
    del got
    gc.collect()
    assert _pins(client, oid) == 1
    assert bytes(part) == b"q" * 10
    del part
    gc.collect()
    assert _pins(client, oid) == 0


def test_unpicklable_object_creates_nothing(client, ids):
    oid = ids("unpicklable")
    with pytest.raises((pickle.PicklingError, TypeError, AttributeError)):
        client.put_object(oid, lambda: 1)
    assert not client.contains(oid)


def test_object_not_written_by_put_object_is_refused(client, ids):
    oid = ids("raw")
    client.put(oid, b"DPK1 but raw bytes")
    with pytest.raises(depot.ObjectFormatError, match="not written by put_object"):
        client.get_object(oid, timeout=1.0)
    assert _pins(client, oid) == 0


@pytest.mark.parametrize("damage, message", [
    (lambda d: d[:10], "fewer than"),
    (lambda d: b"XXXX" + d[4:], "magic"),
    (lambda d: d[:4] + (10 ** 6).to_bytes(4, "little") + d[8:], "table does not fit"),
    (lambda d: d[:8] + (10 ** 9).to_bytes(8, "little") + d[16:], "outside the data"),
    (lambda d: d[:24 + 16] + (9).to_bytes(4, "little") + d[24 + 20:], "kind 9"),
])
def test_damaged_layout_is_an_error_naming_what_is_wrong(client, ids, damage, message):
    good = ids("good")
    client.put_object(good, b"z" * 2000)
    with client.get(good, timeout=1.0) as view:
        raw = bytes(view.data)
    bad = depot.ObjectId.random()
    client.put(bad, damage(raw), metadata=pickling.MAGIC)
    with pytest.raises(depot.ObjectFormatError, match=message):
        client.get_object(bad, timeout=1.0)
    assert _pins(client, bad) == 0


def test_numpy_array_is_zero_copy_read_only_and_pinned_while_alive(client, ids):
    np = pytest.importorskip("numpy")
    oid = ids("array")
    array = np.arange(100_000, dtype=np.float64).reshape(1000, 100)
    client.put_object(oid, {"x": array, "label": "train"})
    got = client.get_object(oid, timeout=1.0)
    x = got["x"]
    assert got["label"] == "train"
    np.testing.assert_array_equal(x, array)
    assert not x.flags.writeable and x.ctypes.data % 64 == 0
    with client.get(oid, timeout=1.0) as view:  # the array lies inside the object's own bytes
        base = np.frombuffer(view.data, dtype=np.uint8)
        start = base.ctypes.data
        assert start <= x.ctypes.data and x.ctypes.data + x.nbytes <= start + view.size
        del base
    column = x[:, 3]
    del got, x
    gc.collect()
    assert _pins(client, oid) == 1
    assert column[999] == array[999, 3]
    del column
    gc.collect()
    assert _pins(client, oid) == 0


def test_pandas_frame_round_trips_with_columns_in_shared_memory(client, ids):
    pd = pytest.importorskip("pandas")
    np = pytest.importorskip("numpy")
    oid = ids("frame")
    frame = pd.DataFrame({"a": np.arange(10_000, dtype=np.int64), "b": np.linspace(0, 1, 10_000),
                          "s": ["row%d" % i for i in range(10_000)]})
    client.put_object(oid, frame)
    got = client.get_object(oid, timeout=1.0)
    pd.testing.assert_frame_equal(got, frame)
    assert not got["a"].to_numpy().flags.writeable
    series = got["b"]
    del got
    gc.collect()
    assert series.iloc[-1] == 1.0
    del series
    gc.collect()
    assert _pins(client, oid) == 0


def test_pyarrow_table_round_trips_with_buffers_in_shared_memory(client, ids):
    pa = pytest.importorskip("pyarrow")
    oid = ids("table")
    table = pa.table({"n": pa.array(range(50_000), type=pa.int64()), "t": pa.array(["v%d" % i for i in range(50_000)])})
    client.put_object(oid, table)
    got = client.get_object(oid, timeout=1.0)
    assert got.equals(table)
    with client.get(oid, timeout=1.0) as view:
        assert len(pickling.read_layout(view.data).buffers) >= 3
    del got
    gc.collect()
    assert _pins(client, oid) == 0
