"""The README's Python example, run as a new user would: a fresh process whose connect(start=True) starts the
daemon, which is gone, with its store, once the process exits."""

import os
import re
import shutil
import subprocess
import sys
import uuid

import pytest

from conftest import REPO, child_env, class_path, java_executable


def _readme_python_example():
    with open(os.path.join(REPO, "README.md")) as f:
        text = f.read()
    section = text[text.index("\n## Python\n"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_readme_python_example_runs_and_leaves_nothing_behind():
    pytest.importorskip("numpy")
    if java_executable() is None or class_path() is None:
        pytest.skip("needs a JDK 25 and the built Java modules")
    from depot import daemon
    try:
        daemon.find_launcher()
    except daemon.DaemonStartError as e:
        pytest.skip(str(e))
    store = os.path.join("/dev/shm", "depot-test-" + uuid.uuid4().hex)
    env = child_env()
    env["DEPOT_DIR"] = store
    try:
        out = subprocess.run([sys.executable, "-c", _readme_python_example()], env=env, capture_output=True,
                             text=True, timeout=180)
        assert out.returncode == 0, out.stderr
        assert out.stdout.split() == ["523776.0", "run-7", "2046.0"]
        assert not os.path.exists(store)
    finally:
        shutil.rmtree(store, ignore_errors=True)
