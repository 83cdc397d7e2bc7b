"""depot-dist/src/wheel/build_wheel.py: the wheel holds the package, the jars and metadata that pip checks, and
the same inputs give the same bytes."""

import base64
import hashlib
import importlib.util
import os
import shutil
import sys
import sysconfig
import zipfile

import pytest

from conftest import REPO

pytest.importorskip("tomllib", reason="build_wheel.py needs Python 3.11 (tomllib)")


def _builder():
    spec = importlib.util.spec_from_file_location("build_wheel", os.path.join(REPO, "depot-dist", "src", "wheel",
                                                                              "build_wheel.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def jars(tmp_path):
    d = tmp_path / "jars"
    d.mkdir()
    (d / "depot-cli-9.9.jar").write_bytes(b"cli")
    (d / "picocli-4.7.7.jar").write_bytes(b"picocli")
    return d


def test_wheel_should_hold_the_package_the_jars_and_a_record_of_every_file(jars, tmp_path):
    wheel = _builder().build(os.path.join(REPO, "python"), str(jars), str(tmp_path / "out"), pure=True)
    assert os.path.basename(wheel) == "depot_shm-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        info = "depot_shm-0.1.0.dist-info/"
        assert {"depot/__init__.py", "depot/daemon.py", "depot/_jars/depot-cli-9.9.jar",
                "depot/_jars/picocli-4.7.7.jar", info + "METADATA", info + "WHEEL", info + "RECORD"} <= set(names)
        assert not [n for n in names if "__pycache__" in n or n.endswith((".pyc", ".c", ".so")) or n.startswith("tests/")]
        assert "Root-Is-Purelib: true\nTag: py3-none-any\n" in z.read(info + "WHEEL").decode()
        metadata = z.read(info + "METADATA").decode()
        assert "Name: depot-shm\n" in metadata and 'Requires-Dist: numpy ; extra == "numpy"' in metadata
        assert "depot = depot.command:main" in z.read(info + "entry_points.txt").decode()
        record = [line.split(",") for line in z.read(info + "RECORD").decode().splitlines()]
        assert sorted(r[0] for r in record) == sorted(names)
        for name, digest, size in record:
            if name != info + "RECORD":
                data = z.read(name)
                expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                assert digest == "sha256=" + expected
                assert int(size) == len(data)


def test_the_same_inputs_should_give_the_same_wheel(jars, tmp_path, monkeypatch):
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    builder = _builder()
    first = builder.build(os.path.join(REPO, "python"), str(jars), str(tmp_path / "a"))
    os.utime(jars / "picocli-4.7.7.jar", (1, 1))  # file dates do not reach the wheel
    second = builder.build(os.path.join(REPO, "python"), str(jars), str(tmp_path / "b"))
    with open(first, "rb") as a, open(second, "rb") as b:
        assert a.read() == b.read()


def test_jars_without_the_cli_are_refused(tmp_path):
    (tmp_path / "jars").mkdir()
    with pytest.raises(SystemExit, match=r"no depot-cli-\*\.jar in .*jars \(found 0 jars\)"):
        _builder().build(os.path.join(REPO, "python"), str(tmp_path / "jars"), str(tmp_path / "out"))


def test_wheel_should_carry_the_c_extension_for_this_python_when_it_compiles(jars, tmp_path):
    pytest.importorskip("setuptools", reason="the extension is built with setuptools")
    if shutil.which((sysconfig.get_config_var("CC") or "cc").split()[0]) is None:
        pytest.skip("no C compiler: the wheel is pure")
    wheel = _builder().build(os.path.join(REPO, "python"), str(jars), str(tmp_path / "out"))
    tag = "cp%d%d" % sys.version_info[:2]
    assert os.path.basename(wheel).startswith("depot_shm-0.1.0-%s-%s-linux_" % (tag, tag))
    with zipfile.ZipFile(wheel) as z:
        assert "depot/_native" + sysconfig.get_config_var("EXT_SUFFIX") in z.namelist()
        assert "Root-Is-Purelib: false\n" in z.read("depot_shm-0.1.0.dist-info/WHEEL").decode()
        assert not [n for n in z.namelist() if n.endswith(".c")]
    assert os.listdir(tmp_path / "out") == [os.path.basename(wheel)]
