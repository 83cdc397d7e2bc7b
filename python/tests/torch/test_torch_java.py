"""Tensors between Python and Java: ``put_tensor`` writes what Java's ``ArrayMetadata`` reads, and ``get_tensor``
maps what a Java ``ObjectWriter`` wrote, without a copy."""

import os
import subprocess
import uuid

import pytest

from conftest import class_path, java_executable

torch = pytest.importorskip("torch")

import depot  # noqa: E402
from depot.torch import get_tensor, put_tensor  # noqa: E402

TENSORS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "java", "Tensors.java")


def java(*args):
    """Runs java/Tensors.java; its stdout lines. Skips where no JDK 25 or no built Java modules."""
    executable, cp = java_executable(), class_path()
    if executable is None or cp is None:
        pytest.skip("needs a JDK 25 and the built Java modules")
    command = [executable, "--enable-native-access=ALL-UNNAMED", "-cp", cp, TENSORS] + [str(a) for a in args]
    out = subprocess.run(command, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.splitlines()


def test_java_reads_the_tensors_python_puts(shared_daemon):
    prefix = uuid.uuid4().hex
    tensors = {
        "f32": torch.arange(12, dtype=torch.float32).reshape(4, 3).t() / 2,  # non-contiguous: stored in C order
        "i64": torch.tensor([[-3, 0], [7, 1 << 40]], dtype=torch.int64),
        "i16": torch.tensor([-5, 5], dtype=torch.int16),
        "u8": torch.tensor([0, 255, 7], dtype=torch.uint8),
        "b1": torch.tensor([True, False, True]),
        "bf16": torch.tensor([1.5, -2.0], dtype=torch.bfloat16),
    }
    with depot.connect(shared_daemon.dir) as c:
        for name, t in tensors.items():
            put_tensor(c, depot.ObjectId.of("%s-%s" % (prefix, name)), t)
        lines = java("read", shared_daemon.dir, *["%s-%s" % (prefix, n) for n in tensors])
        got = {line.split()[0][len(prefix) + 1:]: line.split()[1:] for line in lines}
        assert got["f32"][:3] == ["<f4", "[3,4]", "-"]
        assert [float(v) for v in got["f32"][3:]] == tensors["f32"].flatten().tolist()
        assert got["i64"][:2] == ["<i8", "[2,2]"] and [int(v) for v in got["i64"][3:]] == [-3, 0, 7, 1 << 40]
        assert got["i16"] == ["<i2", "[2]", "-", "-5", "5"]
        assert got["u8"] == ["|u1", "[3]", "-", "0", "255", "7"]
        assert got["b1"] == ["|b1", "[3]", "-", "true", "false", "true"]
        # bfloat16: Java reads its bits as uint16; the tag after the header names torch's dtype
        assert got["bf16"][:2] == ["<u2", "[2]"] and got["bf16"][2] == (b"DPT1\x08bfloat16").hex()
        assert [int(v) for v in got["bf16"][3:]] == [0x3FC0, 0xC000]
        for name in tensors:
            c.delete(depot.ObjectId.of("%s-%s" % (prefix, name)))


def test_python_maps_the_arrays_java_writes_as_tensors_without_a_copy(shared_daemon):
    prefix = uuid.uuid4().hex
    assert java("write", shared_daemon.dir, prefix) == ["written"]
    with depot.connect(shared_daemon.dir) as c:
        def tensor(name):
            oid = depot.ObjectId.of("%s-%s" % (prefix, name))
            t = get_tensor(c, oid, timeout=10)
            base = c._mapping.base
            assert base <= t.data_ptr() < base + c.file_length, "a view of the store, not a copy"
            assert t.data_ptr() == c.get_array(oid).ctypes.data
            return t

        f32 = tensor("f32")
        assert f32.dtype == torch.float32 and torch.equal(f32, torch.arange(12, dtype=torch.float32).reshape(3, 4) / 2)
        i64 = tensor("i64")
        assert i64.dtype == torch.int64 and i64.tolist() == [[-3, -2, 1], [6, 13, 22]]
        u8 = tensor("u8")
        assert u8.dtype == torch.uint8 and u8.tolist() == [0, 50, 100, 150, 200]
        f64 = tensor("f64")
        assert f64.dtype == torch.float64 and f64.shape == () and float(f64) == 2.25
        bf16 = tensor("bf16")
        assert bf16.dtype == torch.bfloat16 and bf16.tolist() == [1.5, -2.0]
        del f32, i64, u8, f64, bf16
        for name in ("f32", "i64", "u8", "f64", "bf16"):
            assert c.delete(depot.ObjectId.of("%s-%s" % (prefix, name)))
