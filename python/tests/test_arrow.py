"""depot.arrow: Arrow tables shared zero-copy between Python and Java (docs/ARROW.md). Skipped without pyarrow."""

import gc
import os
import subprocess
import sys

import pytest

import depot
from conftest import REPO, java_command

ARROW_MODULE = os.path.join(REPO, "depot-arrow", "target")
INTEROP_MAIN = "dev.depot.arrow.ArrowInteropMain"


@pytest.fixture
def pa():
    """pyarrow, or a skip before any daemon is started for the test."""
    return pytest.importorskip("pyarrow")


def arrow_java_command(*args):
    """A Java child with depot-arrow and Arrow on its class path; skips the test when they are not built."""
    listing = os.path.join(ARROW_MODULE, "classpath.txt")
    probe = os.path.join(ARROW_MODULE, "test-classes", "dev", "depot", "arrow", "ArrowInteropMain.class")
    if not (os.path.isfile(listing) and os.path.isfile(probe)):
        pytest.skip("depot-arrow is not built: run `mvn -B -pl depot-arrow -am verify`")
    cmd = java_command(INTEROP_MAIN, *args)
    with open(listing) as f:
        extra = [os.path.join(ARROW_MODULE, "classes"), os.path.join(ARROW_MODULE, "test-classes"), f.read().strip()]
    at = cmd.index("-cp") + 1
    cmd[at] = os.pathsep.join([cmd[at]] + extra)
    return cmd


def run_java(*args):
    out = subprocess.run(arrow_java_command(*args), capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout.strip()


def expected_table(pa, first, rows):
    """The rows ArrowTestData (Java) writes and checks: id, id / 2, "n<id>" or null every third row."""
    ids = list(range(first, first + rows))
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "x": pa.array([i / 2.0 for i in ids], pa.float64()),
        "name": pa.array([None if i % 3 == 0 else "n%d" % i for i in ids], pa.string()),
    })


def pins(client, oid):
    return next(i.pin_count for i in client.list() if i.id == oid)


def assert_inside_mapping(pa, client, table):
    base = pa.py_buffer(client._memory).address
    for column in table.columns:
        for chunk in column.chunks:
            for buf in chunk.buffers():
                if buf is not None and buf.size > 0:
                    assert base <= buf.address and buf.address + buf.size <= base + client.file_length, \
                        "column buffer at %#x is not in the store mapping" % buf.address


def test_get_table_reads_a_java_written_stream_without_copying(pa, daemon, client):
    import depot.arrow
    size = int(run_java("put", daemon.dir, "java-arrow", 1000, 3).split()[1])
    oid = depot.ObjectId.of("java-arrow")
    table = depot.arrow.get_table(client, oid, timeout=10)
    assert table.num_rows == 3000 and table.column("id").num_chunks == 3
    expected = expected_table(pa, 0, 3000)
    assert table.schema.field("id").nullable is False, "Java's not-null field stays not-null"
    assert all(table.column(n).equals(expected.column(n)) for n in expected.column_names)
    assert_inside_mapping(pa, client, table)
    assert pins(client, oid) == 1
    frame = table.column("x").slice(10, 5).to_pandas()
    assert list(frame) == [5.0, 5.5, 6.0, 6.5, 7.0]
    assert table.to_pandas()["name"].isna().sum() == 1000
    assert next(i.data_size for i in client.list() if i.id == oid) == size
    x = table.column("x")
    del table
    gc.collect()
    client.flush()
    assert pins(client, oid) == 1, "a column taken from the table still holds the pin"
    del x, frame
    gc.collect()
    client.flush()
    assert pins(client, oid) == 0


def test_java_reads_a_python_written_table_zero_copy(pa, daemon, client):
    import depot.arrow
    table = pa.concat_tables([expected_table(pa, 0, 500), expected_table(pa, 500, 500)])
    depot.arrow.put_table(client, depot.ObjectId.of("python-arrow"), table.combine_chunks())
    assert run_java("check", daemon.dir, "python-arrow", 1000) == "checked 1 %d" % sum(range(1000))


def test_put_table_and_get_table_round_trip_in_python(pa, client):
    import depot.arrow
    oid = depot.ObjectId.of("round-trip")
    table = pa.table({"a": pa.array(range(100), pa.int32()), "b": pa.array([[1, 2]] * 100)})
    size = depot.arrow.put_table(client, oid, table)
    with client.get(oid, timeout=0) as view:
        assert view.metadata == depot.arrow.MEDIA_TYPE and view.size == size
    got = depot.arrow.get_table(client, oid, timeout=0)
    assert got.equals(table)
    assert_inside_mapping(pa, client, got)
    del got
    gc.collect()
    client.flush()
    assert pins(client, oid) == 0


def test_get_table_refuses_what_is_not_a_complete_stream_and_releases_its_pin(pa, client):
    import depot.arrow
    client.put(depot.ObjectId.of("not-arrow"), b"certainly not an arrow stream")
    with pytest.raises(ValueError, match="not a complete Arrow IPC stream"):
        depot.arrow.get_table(client, depot.ObjectId.of("not-arrow"), timeout=0)
    depot.arrow.put_table(client, depot.ObjectId.of("whole"), pa.table({"a": list(range(50))}))
    with client.get(depot.ObjectId.of("whole"), timeout=0) as view:
        data = view.to_bytes()
    client.put(depot.ObjectId.of("cut"), data[:len(data) // 2])
    with pytest.raises(ValueError):
        depot.arrow.get_table(client, depot.ObjectId.of("cut"), timeout=0)
    assert all(i.pin_count == 0 for i in client.list())
    with pytest.raises(TypeError, match="dictionary"):
        depot.arrow.put_table(client, depot.ObjectId.of("dict"), pa.table({"d": pa.array(["a", "b"]).dictionary_encode()}))


def test_missing_pyarrow_is_an_import_error_naming_the_extra(monkeypatch):
    import depot.arrow
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(ImportError, match=r"pip install 'depot-shm\[arrow\]'"):
        depot.arrow.put_table(None, None, None)
