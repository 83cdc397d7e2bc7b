"""docs/DISTRIBUTED.md's ``LocalCluster`` example, run as the script a user writes, in a process of its own: its
cluster starts the store's daemon, computes on the workers, and leaves no daemon, store or process behind."""

import os
import re
import shutil
import sys
import uuid

import pytest

pytest.importorskip("distributed")
pytest.importorskip("dask.array")
pytest.importorskip("numpy")

from conftest import REPO, child_env, require_launcher  # noqa: E402
from dist_processes import SessionProcess, session_members, wait_until  # noqa: E402

DOC = os.path.join(REPO, "docs", "DISTRIBUTED.md")


def _local_cluster_example():
    with open(DOC) as f:
        text = f.read()
    section = text[text.index("\n## One machine: `LocalCluster`\n"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_local_cluster_example_computes_and_leaves_nothing(tmp_path):
    if not os.path.isfile(DOC):
        pytest.skip("docs/DISTRIBUTED.md is not beside the tests (installed without the checkout)")
    require_launcher()
    code = _local_cluster_example()
    assert 'depot_capacity="8g"' in code
    script = tmp_path / "cluster.py"
    script.write_text(code.replace('depot_capacity="8g"', 'depot_capacity="256m"'))  # the test machine's share
    store = os.path.join("/dev/shm", "depot-test-" + uuid.uuid4().hex)
    env = child_env()
    env["DEPOT_DIR"] = store
    child = SessionProcess([sys.executable, script], tmp_path / "cluster.log", env=env)
    try:
        assert child.proc.wait(timeout=300) == 0, child.output()[-4000:]
        assert "8000000.0" in child.output().splitlines(), child.output()[-4000:]
        wait_until(lambda: not os.path.exists(store), "the cluster's store to be removed")
        wait_until(lambda: not session_members(child.pid), "every process the script started to end")
    finally:
        child.close()
        shutil.rmtree(store, ignore_errors=True)
