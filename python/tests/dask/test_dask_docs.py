"""The examples of docs/DASK.md, run in order in a real Python process (as a user would run them)."""

import os
import re

import pytest

from dask_fixtures import dask_daemon, store_objects  # noqa: F401

from conftest import python_child  # noqa: E402

DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "docs", "DASK.md")


def _examples():
    with open(DOC) as f:
        return "\n".join(re.findall(r"```python\n(.*?)```", f.read(), re.S))


def test_dask_md_examples_run(dask_daemon):
    if not os.path.isfile(DOC):
        pytest.skip("docs/DASK.md is not beside the tests (installed without the checkout)")
    code = "import os, sys\nos.environ['DEPOT_DIR'] = sys.argv[1]\n" + _examples() + "\nprint('examples done')\n"
    with python_child(code, dask_daemon.dir) as child:
        child.await_line("examples done", timeout=300)
        assert child.proc.wait(timeout=60) == 0
    assert store_objects(dask_daemon.dir) == []
