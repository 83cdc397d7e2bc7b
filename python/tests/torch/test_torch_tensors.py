"""depot.torch.put_tensor / get_tensor: tensors in the array format, read back as zero-copy views that hold
their pin while they live."""

import gc
import warnings

import pytest

from conftest import python_child

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")

import depot  # noqa: E402
from depot.torch import get_tensor, put_tensor  # noqa: E402

DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16,
          torch.float32, torch.float64, torch.complex64, torch.complex128, torch.bfloat16, torch.uint16]
SHAPES = [(), (0,), (7,), (3, 4), (2, 3, 5), (4, 0, 2)]


def sample(dtype, shape):
    t = torch.arange(int(np.prod(shape)) if shape else 1, dtype=torch.float64).reshape(shape) % 100
    if dtype == torch.bool:
        return t % 2 == 1
    if dtype.is_complex:
        return (t + 1j * t).to(dtype)
    return t.to(dtype)


def pins(client):
    return client.stat().connection_pins


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_tensors_of_every_dtype_and_shape_round_trip(shared_daemon, dtype, shape):
    with depot.connect(shared_daemon.dir) as c:
        oid = depot.ObjectId.random()
        t = sample(dtype, shape)
        put_tensor(c, oid, t)
        got = get_tensor(c, oid)
        assert got.dtype == dtype and tuple(got.shape) == shape
        assert torch.equal(got, t)
        del got
        c.delete(oid)


def test_a_get_is_a_view_of_the_object_that_holds_its_pin_until_its_storage_is_freed(shared_daemon):
    with depot.connect(shared_daemon.dir) as c:
        oid = depot.ObjectId.random()
        put_tensor(c, oid, torch.arange(1000, dtype=torch.float32))
        before = pins(c)
        t = get_tensor(c, oid)
        assert pins(c) == before + 1
        array = c.get_array(oid)
        assert t.data_ptr() == array.ctypes.data  # the same shared memory: no copy
        del array
        part = t[10:20].reshape(2, 5)
        del t
        gc.collect()
        assert pins(c) == before + 1, "a view of the tensor's storage keeps the pin"
        assert part[0, 0].item() == 10.0
        del part
        assert pins(c) == before  # freed with the storage, without a collection
        assert c.delete(oid)


def test_copy_gives_a_private_writable_tensor_and_releases_at_once(shared_daemon):
    with depot.connect(shared_daemon.dir) as c:
        oid = depot.ObjectId.random()
        put_tensor(c, oid, torch.ones(16))
        before = pins(c)
        t = get_tensor(c, oid, copy=True)
        assert pins(c) == before
        t += 1
        assert torch.equal(get_tensor(c, oid), torch.ones(16))
        assert t.data_ptr() != c.get_array(oid).ctypes.data


def test_a_get_does_not_warn_about_a_non_writable_buffer(shared_daemon):
    with depot.connect(shared_daemon.dir) as c:
        oid = depot.ObjectId.random()
        put_tensor(c, oid, torch.ones(4))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            get_tensor(c, oid)


def test_the_tensor_outlives_its_client(shared_daemon):
    c = depot.connect(shared_daemon.dir)
    oid = depot.ObjectId.random()
    put_tensor(c, oid, torch.arange(5))
    t = get_tensor(c, oid)
    c.close()
    assert t.tolist() == [0, 1, 2, 3, 4]


def test_numpy_reads_a_tensor_and_torch_reads_an_array(shared_daemon):
    with depot.connect(shared_daemon.dir) as c:
        a, b, f = depot.ObjectId.random(), depot.ObjectId.random(), depot.ObjectId.random()
        put_tensor(c, a, torch.arange(12, dtype=torch.int32).reshape(3, 4))
        got = c.get_array(a)
        assert got.dtype == np.int32 and got.shape == (3, 4) and got[2, 3] == 11
        source = np.linspace(0, 1, 6).reshape(2, 3)
        c.put_array(b, source)
        assert torch.equal(get_tensor(c, b), torch.from_numpy(source))
        put_tensor(c, f, torch.tensor([1.5, -2.0], dtype=torch.bfloat16), metadata=b"mine")
        raw = c.get_array(f)  # NumPy has no bfloat16: it reads the bits
        assert raw.dtype == np.uint16
        assert torch.equal(torch.from_numpy(raw.copy()).view(torch.bfloat16), get_tensor(c, f))


def test_a_non_contiguous_tensor_is_stored_in_c_order(shared_daemon):
    with depot.connect(shared_daemon.dir) as c:
        oid = depot.ObjectId.random()
        t = torch.arange(24).reshape(4, 6).t()[::2]
        put_tensor(c, oid, t)
        assert torch.equal(get_tensor(c, oid), t)
        assert (c.get_array(oid) == t.numpy()).all()


def test_what_cannot_be_stored_is_refused_before_anything_is_created(shared_daemon):
    with depot.connect(shared_daemon.dir) as c:
        oid = depot.ObjectId.random()
        with pytest.raises(TypeError):
            put_tensor(c, oid, np.ones(3))
        with pytest.raises(ValueError, match="dense"):
            put_tensor(c, oid, torch.eye(3).to_sparse())
        assert not c.contains(oid)
        c.put_array(oid, np.ones(3, dtype=">f8"))
        with pytest.raises(ValueError, match="no torch dtype"):
            get_tensor(c, oid)


def test_another_process_reads_the_tensor_zero_copy(shared_daemon):
    with depot.connect(shared_daemon.dir) as c:
        oid = depot.ObjectId.random()
        put_tensor(c, oid, torch.arange(256, dtype=torch.float32).reshape(16, 16))
        code = ("import sys, depot\nfrom depot.torch import get_tensor, put_tensor\n"
                "c = depot.connect(sys.argv[1])\n"
                "t = get_tensor(c, bytes.fromhex(sys.argv[2]))\n"
                "assert t.data_ptr() == c.get_array(bytes.fromhex(sys.argv[2])).ctypes.data\n"
                "put_tensor(c, bytes.fromhex(sys.argv[3]), t.sum(dim=0))\n"
                "print('done', float(t[15, 15]), flush=True)\n")
        back = depot.ObjectId.random()
        with python_child(code, shared_daemon.dir, oid.hex(), back.hex()) as child:
            assert child.await_line("done", timeout=60) == "done 255.0"
            assert child.proc.wait(timeout=60) == 0
        assert torch.equal(get_tensor(c, back), torch.arange(256, dtype=torch.float32).reshape(16, 16).sum(dim=0))
