"""bin/test on a machine where it can install nothing (not root, no package index): every phase that needs what
is missing says so and is skipped, the rest runs, and the run passes. Maven, apt-get, dpkg-query, id and the
interpreters are stand-ins, so the machine is left as it is and no test suite runs twice."""

import os
import subprocess

import pytest

from conftest import java_executable, system_packages

BIN_TEST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bin", "test")

STAND_INS = {
    "mvn": 'echo "$*" >> "$FAKE/mvn.log"\n',
    "dpkg-query": 'exit 1\n',  # nothing installed
    "apt-get": 'echo "$*" >> "$FAKE/apt.log"\n',
    "id": 'echo 1000\n',  # not root
    # an interpreter whose pip reaches no index, and a system interpreter without pytest
    "python3": 'case "$1 $2" in\n  "-c "*) echo "3.11.0 (stand-in)" ;;\n'
               '  "-m venv") mkdir -p "$3/bin" && cp "$0" "$3/bin/python" ;;\n'
               '  "-m pip") echo "ERROR: No matching distribution found for numpy==2.4.6" >&2; exit 1 ;;\nesac\n',
    "system-python": 'exit 1\n',
}


@pytest.fixture
def fake(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, body in STAND_INS.items():
        (bin_dir / name).write_text("#!/bin/bash\n" + body)
        (bin_dir / name).chmod(0o755)
    (tmp_path / "wheels").mkdir()
    return tmp_path


def test_what_cannot_be_installed_is_named_and_its_phases_skip(fake):
    if java_executable() is None:
        pytest.skip("bin/test needs a JDK 25")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEPOT_") and k != "CI"}
    env.update(FAKE=str(fake), PATH="%s:%s" % (fake / "bin", os.environ["PATH"]), DEPOT_CACHE=str(fake / "cache"),
               DEPOT_PYTHON=str(fake / "bin" / "python3"), DEPOT_SYSTEM_PYTHON=str(fake / "bin" / "system-python"),
               DEPOT_WHEELS=str(fake / "wheels"), TMPDIR=str(fake), JAVA_HOME=os.path.dirname(
                   os.path.dirname(java_executable())))
    result = subprocess.run([BIN_TEST, "-o"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            stdin=subprocess.DEVNULL, timeout=300)
    out = result.stdout
    assert result.returncode == 0, out
    assert " ".join(system_packages()) + " not installed (not running as root)" in out
    assert not (fake / "apt.log").exists()
    assert "No matching distribution found for numpy==2.4.6" in out
    for phase in ("Python environment 1: requirements.txt", "Python environment 3: requirements-distributed.txt"):
        assert "== %s" % phase in out and "could not be built" in out
    assert (fake / "mvn.log").read_text() == "-B verify -o\n"
    for line in ("skipped  Python tests 1: installed package (no environment: see its phase above)",
                 "skipped  Python tests 2: %s, package on PYTHONPATH, ctypes path (%s has no pytest: apt-get install"
                 " python3-pytest)" % (fake / "bin" / "system-python", fake / "bin" / "system-python"),
                 "skipped  Python tests 3: installed package, dask.distributed (no environment: see its phase above)",
                 "passed   Java tests"):
        assert line in out, out
    assert "skipped  Debian packages for /usr/bin/python3 (missing: python3-distributed python3-dask" in out
    assert out.rstrip().endswith("== all tests passed (skipped: 6 phases, named above)")
    assert os.listdir(fake / "cache") == [n for n in os.listdir(fake / "cache") if n.endswith(".log")]
