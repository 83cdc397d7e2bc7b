"""The examples of docs/PYTHON.md, run with assertions."""

import pytest

import depot


def test_python_md_examples(daemon, monkeypatch):
    monkeypatch.setenv("DEPOT_DIR", daemon.dir)
    with depot.connect() as client:
        oid = depot.ObjectId.of("greeting")
        client.put(oid, b"hello, depot", metadata=b"text/plain")

        with client.get(oid, timeout=1.0) as view:
            assert bytes(view.data) == b"hello, depot"
            assert view.metadata == b"text/plain"

        oid = depot.ObjectId.of("dataset/part-7")
        with client.create(oid, 1 << 20, metadata=b"raw") as writer:
            writer.data[:4] = b"\x01\x02\x03\x04"
            writer.seal()
        assert client.contains(oid)

        a, b, c = (depot.ObjectId.of(n) for n in "abc")
        client.put(a, b"a")
        client.put(c, b"c")
        views = client.get_many([a, b, c], timeout=0.05)
        try:
            assert views[1] is None
        finally:
            for v in views:
                if v is not None:
                    v.release()

        np = pytest.importorskip("numpy")
        client.put_array(depot.ObjectId.of("weights"), np.random.rand(1000, 64))
        weights = client.get_array(depot.ObjectId.of("weights"), timeout=10)
        assert weights.shape == (1000, 64) and weights.dtype == np.float64
        assert not weights.flags.writeable
