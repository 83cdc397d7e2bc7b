"""Spark writes a dataset through the depot data source; Python reads it zero-copy with depot.arrow.read_dataset,
also as docs/SPARK.md's example (docs/examples/read_spark_dataset.py) does. Skipped without pyarrow or when
depot-spark is not built."""

import gc
import os
import subprocess
import sys

import pytest

import depot
from conftest import REPO, child_env, java_command

SPARK_MODULE = os.path.join(REPO, "depot-spark", "target")


@pytest.fixture
def pa():
    return pytest.importorskip("pyarrow")


def spark_command(*args):
    listing = os.path.join(SPARK_MODULE, "classpath.txt")
    options = os.path.join(SPARK_MODULE, "classes", "dev", "depot", "spark", "java-options.txt")
    probe = os.path.join(SPARK_MODULE, "test-classes", "dev", "depot", "spark", "SparkReadMain.class")
    if not all(os.path.isfile(p) for p in (listing, options, probe)):
        pytest.skip("depot-spark is not built: run `mvn -B -pl depot-spark -am verify`")
    cmd = java_command("dev.depot.spark.SparkReadMain", *args)
    with open(listing) as f:
        extra = [os.path.join(SPARK_MODULE, "classes"), os.path.join(SPARK_MODULE, "test-classes"), f.read().strip()]
    at = cmd.index("-cp")
    cmd[at + 1] = os.pathsep.join([cmd[at + 1]] + extra)
    with open(options) as f:
        cmd[1:1] = f.read().split()
    return [("-Xmx512m" if a == "-Xmx256m" else a) for a in cmd]  # Spark needs 450 MiB at least


def test_python_reads_what_spark_wrote_without_copying(pa, daemon, client):
    import depot.arrow
    out = subprocess.run(spark_command(daemon.dir, "-", "events", 999), capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr[-4000:]
    assert "wrote 999" in out.stdout
    example = subprocess.run([sys.executable, os.path.join(REPO, "docs", "examples", "read_spark_dataset.py")],
                             env=dict(child_env(), DEPOT_DIR=daemon.dir), capture_output=True, text=True,
                             timeout=120)
    assert example.returncode == 0, example.stderr
    assert example.stdout.split("\n")[0] == "999 ['id', 'x']", "docs/SPARK.md's Python example"
    table = depot.arrow.read_dataset(client, "events")
    assert table.num_rows == 999 and table.column_names == ["id", "x"]
    assert table.column("x").num_chunks == 3, "one chunk per part (Spark task)"
    assert sorted(table.column("id").to_pylist()) == list(range(999))
    assert table.to_pandas()["x"].sum() == 249250.5
    base = pa.py_buffer(client._memory).address
    for chunk in table.column("x").chunks:
        data = chunk.buffers()[1]
        assert base <= data.address < base + client.file_length
    del table, chunk, data
    gc.collect()
    client.flush()
    assert all(i.pin_count == 0 for i in client.list())
