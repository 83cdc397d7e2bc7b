"""The examples of docs/TORCH.md, run in order in a real Python process, and the benchmark's --quick run."""

import json
import os
import re
import subprocess
import sys

import pytest

from conftest import child_env, python_child, require_launcher

pytest.importorskip("torch")
pytest.importorskip("numpy")

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
DOC = os.path.join(REPO, "docs", "TORCH.md")
BENCH = os.path.join(REPO, "scripts", "bench-torch")


def test_torch_md_examples_run(shared_daemon):
    if not os.path.isfile(DOC):
        pytest.skip("docs/TORCH.md is not beside the tests (installed without the checkout)")
    pytest.importorskip("dask.array")
    with open(DOC) as f:
        examples = "\n".join(re.findall(r"```python\n(.*?)```", f.read(), re.S))
    code = "import os, sys\nos.environ['DEPOT_DIR'] = sys.argv[1]\n" + examples + "\nprint('examples done')\n"
    with python_child(code, shared_daemon.dir) as child:
        child.await_line("examples done", timeout=300)
        assert child.proc.wait(timeout=60) == 0


def test_the_benchmark_quick_run_prints_one_result_per_case():
    if not os.path.isfile(BENCH):
        pytest.skip("scripts/bench-torch is not beside the tests")
    require_launcher()
    env = child_env()
    env["DEPOT_BENCH_PYTHON"] = sys.executable
    out = subprocess.run([BENCH, "--quick", "--json"], env=env, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-2000:]
    results = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    assert [r["case"] for r in results] == ["epoch 1", "epoch 2", "peak PSS sum", "batch hand-off"]
    for r in results:
        assert set(r) == {"name", "case", "figures", "baseline", "ratio", "target", "met"}
