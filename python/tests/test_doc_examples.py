"""The docs' examples kept as files: each block marked ``<!-- example: PATH -->`` in README.md or docs/*.md is
that file, word for word, and the Python files run here, each in a process of its own as a user runs it. The
Java files run in the Java tests of their modules (ArrowGuideExampleTest, ShuffleGuideExampleTest,
SparkGuideExampleTest), and ArraysWithPython.java here, beside its Python side."""

import glob
import os
import re
import subprocess
import sys

import pytest

from conftest import REPO, child_env, class_path, java_executable

MARKED_BLOCK = re.compile(r"<!-- example: (\S+) -->\n```\w*\n(.*?)```", re.S)


def _marked_blocks():
    docs = [os.path.join(REPO, "README.md")] + sorted(glob.glob(os.path.join(REPO, "docs", "*.md")))
    for doc in docs:
        with open(doc) as f:
            for path, block in MARKED_BLOCK.findall(f.read()):
                yield os.path.relpath(doc, REPO), path, block


def test_every_marked_block_is_its_example_file():
    blocks = list(_marked_blocks())
    assert blocks, "no <!-- example: PATH --> blocks in the docs"
    for doc, path, block in blocks:
        full = os.path.join(REPO, path)
        assert os.path.isfile(full), "%s names %s, which does not exist" % (doc, path)
        with open(full) as f:
            assert block == f.read(), "%s's block differs from %s: keep them the same" % (doc, path)


def _run_example(name, store_dir):
    env = child_env()
    env["DEPOT_DIR"] = store_dir
    out = subprocess.run([sys.executable, os.path.join(REPO, "docs", "examples", name)], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def test_every_python_example_runs_in_a_test():
    run = {"arrays_with_java.py", "arrow_tables.py", "shuffle_arrays.py",
           "read_spark_dataset.py"}  # test_spark.py: it reads what a Spark application wrote
    examples = {os.path.basename(p) for p in glob.glob(os.path.join(REPO, "docs", "examples", "*.py"))}
    assert examples == run, "a Python example that no test runs"


def test_the_arrow_guide_stores_a_table_and_reads_it_zero_copy(daemon, client):
    pytest.importorskip("pyarrow")
    pytest.importorskip("pandas")
    assert _run_example("arrow_tables.py", daemon.dir) == ["3 7.75"]
    assert client.list() == []


def test_the_shuffle_guide_sends_each_value_to_its_partition(daemon, client):
    pytest.importorskip("numpy")
    assert _run_example("shuffle_arrays.py", daemon.dir) == ["partition 0 sum 7.75", "partition 1 sum 16.5"]
    assert client.list() == []


def test_java_and_python_share_arrays_as_the_guide_shows(daemon):
    pytest.importorskip("numpy")
    java, cp = java_executable(), class_path()
    if java is None or cp is None:
        pytest.skip("needs a JDK 25 and the built Java modules")
    env = child_env()
    env["DEPOT_DIR"] = daemon.dir
    examples = os.path.join(REPO, "docs", "examples")
    java_side = subprocess.Popen([java, "--enable-native-access=ALL-UNNAMED", "-cp", cp,
                                  os.path.join(examples, "ArraysWithPython.java")],
                                 env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        python_side = subprocess.run([sys.executable, os.path.join(examples, "arrays_with_java.py")], env=env,
                                     capture_output=True, text=True, timeout=120)
        out, err = java_side.communicate(timeout=120)
    finally:
        if java_side.poll() is None:
            java_side.kill()
            java_side.wait()
    assert python_side.returncode == 0, python_side.stderr
    assert python_side.stdout.split() == ["float64", "(3,", "4)", "11.0"]
    assert java_side.returncode == 0, err
    assert out.strip() == "<i4 [2, 3] sum 15"
