"""Every Python and Java block of README.md and docs/*.md is executed by a test. ``EXECUTED`` names, for each
block (its document, section heading and first line), the tests that run it; a block missing from it fails
here, so a new example comes with its test, and an entry whose block is gone fails too. Each test named
must exist and name the document or the example file it runs. The systemd units the docs show pass
``systemd-analyze verify`` (depot-cli's DocumentedCommandsTest parses their ``depot serve`` lines), and the
extras the install lines list are the package's."""

import glob
import os
import re
import shutil
import subprocess

import pytest

from conftest import REPO

#: (document, heading, first line) -> the tests that execute the block (paths from the checkout's root)
EXECUTED = {
    ("README.md", "Java API",
     "// Open the store in dir, running the daemon in this process if none serves it yet."): [
        "depot-server/src/test/java/dev/depot/server/TutorialTest.java",
        "depot-dist/src/test/java/dev/depot/dist/MavenDependencyTest.java"],
    ("README.md", "Python", "import numpy as np, depot"): ["python/tests/test_readme.py"],
    ("docs/ARROW.md", "Java", "import dev.depot.arrow.DepotArrow;"): [
        "depot-arrow/src/test/java/dev/depot/arrow/ArrowGuideExampleTest.java"],
    ("docs/ARROW.md", "Python", "import pyarrow as pa"): ["python/tests/test_doc_examples.py"],
    ("docs/DASK.md", "The pipeline, before and after", "import dask"): ["python/tests/dask/test_dask_docs.py"],
    ("docs/DASK.md", "The scheduler", "import dask.array as da"): ["python/tests/dask/test_dask_docs.py"],
    ("docs/DASK.md", "Put once, pass references",
     "table = np.arange(4_000_000, dtype=np.float64)          # 32 MiB"): ["python/tests/dask/test_dask_docs.py"],
    ("docs/DASK.md", "One cache for every process", "def features(i):"): ["python/tests/dask/test_dask_docs.py"],
    ("docs/DASK.md", "One cache for every process", "import depot.cache"): ["python/tests/dask/test_dask_docs.py"],
    ("docs/DASK.md", "DataFrame shuffles", "import pandas as pd"): ["python/tests/dask/test_dask_docs.py"],
    ("docs/DISTRIBUTED.md", "One machine: `LocalCluster`", "import dask.array as da"): [
        "python/tests/dask_distributed/test_distributed_docs.py"],
    ("docs/JAVA-PYTHON.md", "Java writes, Python reads, and back", "import dev.depot.client.ArrayMetadata;"): [
        "python/tests/test_doc_examples.py"],
    ("docs/JAVA-PYTHON.md", "Java writes, Python reads, and back", "import numpy as np"): [
        "python/tests/test_doc_examples.py"],
    ("docs/PYTHON.md", "Starting a daemon", "import depot"): ["python/tests/test_tutorial.py"],
    ("docs/PYTHON.md", "Connecting", "client = depot.connect()          # $DEPOT_DIR, else /dev/shm/depot-$USER"): [
        "python/tests/test_tutorial.py"],
    ("docs/PYTHON.md", "Objects",
     'oid = depot.ObjectId.of("dataset/part-7")   # first 20 bytes of SHA-256("dataset/part-7"): same id in Java'): [
        "python/tests/test_tutorial.py"],
    ("docs/PYTHON.md", "Objects", "with depot.connect() as client:"): ["python/tests/test_tutorial.py"],
    ("docs/PYTHON.md", "Objects", 'with client.create(oid, 1 << 20, metadata=b"raw") as writer:'): [
        "python/tests/test_tutorial.py"],
    ("docs/PYTHON.md", "Objects",
     "views = client.get_many([a, b, c], timeout=5.0)   # one entry per id; None for a missing one"): [
        "python/tests/test_tutorial.py"],
    ("docs/PYTHON.md", "NumPy arrays", "import numpy as np"): ["python/tests/test_tutorial.py"],
    ("docs/PYTHON.md", "NumPy arrays", 'try (ObjectView v = depot.get(ObjectId.of("weights"), 10_000)) {'): [
        "python/tests/test_tutorial.py"],
    ("docs/PYTHON.md", "Any Python object: `put_object`", "import pandas as pd"): ["python/tests/test_tutorial.py"],
    ("docs/PYTHON.md", "Any Python object: `put_object`",
     'try (ObjectView v = depot.get(ObjectId.of("frame"), 10_000)) {'): ["python/tests/test_tutorial.py"],
    ("docs/PYTHON.md", "Notifications: `subscribe`", "with client.subscribe() as events:"): [
        "python/tests/test_tutorial.py"],
    ("docs/SHUFFLE.md", "API", "import dev.depot.client.DepotClient;"): [
        "depot-shuffle/src/test/java/dev/depot/shuffle/ShuffleGuideExampleTest.java"],
    ("docs/SHUFFLE.md", "API", "import numpy as np"): ["python/tests/test_doc_examples.py"],
    ("docs/SPARK.md", "Saving and reading datasets", "import org.apache.spark.sql.Dataset;"): [
        "depot-spark/src/test/java/dev/depot/spark/SparkGuideExampleTest.java"],
    ("docs/SPARK.md", "Saving and reading datasets", "import depot"): ["python/tests/test_spark.py"],
    ("docs/SPARK.md", "Repartitioning through the Depot shuffle", "import dev.depot.spark.DepotShuffle;"): [
        "depot-spark/src/test/java/dev/depot/spark/SparkGuideExampleTest.java"],
    ("docs/TORCH.md", "Before and after", "import time"): ["python/tests/torch/test_torch_docs.py"],
    ("docs/TORCH.md", "Before and after", "import depot.torch"): ["python/tests/torch/test_torch_docs.py"],
    ("docs/TORCH.md", "Tensors in Depot", "import depot"): ["python/tests/torch/test_torch_docs.py"],
    ("docs/TORCH.md", "Dask to torch", "import dask.array as da"): ["python/tests/torch/test_torch_docs.py"],
}

FENCE = re.compile(r"^(```+|~~~+)\s*(\S*)")
EXAMPLE_MARK = re.compile(r"<!-- example: (\S+) -->")


def code_blocks(doc):
    """The fenced blocks of ``doc`` (a path from the checkout's root), in order, as (heading, language, first
    line, the example file the block is marked as, or None)."""
    with open(os.path.join(REPO, doc)) as f:
        lines = f.read().split("\n")
    heading, mark, fence, blocks = "", None, None, []
    for number, line in enumerate(lines):
        if fence is not None:
            if line.startswith(fence):
                fence = None
            continue
        opening = FENCE.match(line)
        if opening:
            fence = opening.group(1)
            first = lines[number + 1].strip() if number + 1 < len(lines) else ""
            blocks.append((heading, opening.group(2), first, mark))
        elif line.startswith("#"):
            heading = line.lstrip("#").strip()
        marked = EXAMPLE_MARK.match(line)
        mark = marked.group(1) if marked else None
    return blocks


def _documents():
    docs = ["README.md"] + sorted(os.path.relpath(p, REPO) for p in glob.glob(os.path.join(REPO, "docs", "*.md")))
    if not os.path.isfile(os.path.join(REPO, docs[0])):
        pytest.skip("README.md is not beside the tests (installed without the checkout)")
    return docs


def _code_blocks_to_execute():
    found = {}
    for doc in _documents():
        for heading, language, first, mark in code_blocks(doc):
            if language in ("python", "java"):
                found[(doc, heading, first)] = mark
    return found


def test_every_python_and_java_block_of_the_docs_is_executed_by_a_test():
    found = _code_blocks_to_execute()
    unlisted = sorted(set(found) - set(EXECUTED))
    assert not unlisted, ("Python or Java blocks that no test executes (write the test, then add the block to "
                          "EXECUTED in %s): %s" % (os.path.basename(__file__), unlisted))
    gone = sorted(set(EXECUTED) - set(found))
    assert not gone, "EXECUTED lists blocks the docs no longer have (moved, renamed or edited?): %s" % gone


def test_each_test_named_exists_and_names_what_it_runs():
    found = _code_blocks_to_execute()
    for key, tests in EXECUTED.items():
        doc = key[0]
        mark = found.get(key)
        for test in tests:
            path = os.path.join(REPO, test)
            assert os.path.isfile(path), "%s: %s does not exist" % (key, test)
            with open(path) as f:
                source = f.read()
            names = [os.path.basename(doc)] + ([os.path.basename(mark)] if mark else [])
            assert any(n in source for n in names), "%s names neither of %s, which it should run" % (test, names)



def _systemd_units():
    """(document, unit file name, text) of each ``ini`` block that is a unit: its first line names its path."""
    for doc in _documents():
        with open(os.path.join(REPO, doc)) as f:
            for unit in re.findall(r"```ini\n(# /etc/systemd/system/\S+\n.*?)```", f.read(), re.S):
                yield doc, os.path.basename(unit.split("\n", 1)[0][2:]), unit


def test_the_systemd_units_of_the_docs_verify(tmp_path):
    units = list(_systemd_units())
    assert {doc for doc, _, _ in units} == {"docs/OPERATING.md", "docs/DISTRIBUTED.md"}
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("needs systemd-analyze")
    for doc, name, unit in units:
        assert "/opt/depot/bin/depot serve " in unit, "%s: the unit runs no `depot serve`" % doc
        path = tmp_path / name
        path.write_text(unit.replace("/opt/depot/bin/depot", "/bin/true"))  # the distribution is not installed
        out = subprocess.run([analyze, "verify", "--man=no", str(path)], capture_output=True, text=True,
                             timeout=60)
        assert out.returncode == 0 and not out.stderr.strip(), "%s: %s %s" % (doc, out.stdout, out.stderr)


def test_the_extras_the_docs_list_are_the_packages():
    """Each ``# extras: ...`` of an install line names every extra of python/pyproject.toml (``test`` may be left
    out) and no other."""
    tomllib = pytest.importorskip("tomllib")
    with open(os.path.join(REPO, "python", "pyproject.toml"), "rb") as f:
        extras = set(tomllib.load(f)["project"]["optional-dependencies"])
    lists = []
    for doc in _documents():
        with open(os.path.join(REPO, doc)) as f:
            for listed in re.findall(r"# extras: ([^\n]*)", f.read()):
                lists.append(listed)
                named = {re.sub(r"\s*\(.*\)", "", e).strip() for e in listed.split(",")}
                assert named | {"test"} == extras | {"test"}, "%s lists extras %s; python/pyproject.toml has %s" % (
                    doc, sorted(named), sorted(extras))
    assert len(lists) >= 2
