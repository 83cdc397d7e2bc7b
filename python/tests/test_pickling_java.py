"""Java's PickledObject reads the buffers of objects that Python's put_object wrote, in place."""

import os
import subprocess

import pytest

import depot
from conftest import class_path, java_executable

READER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "java", "ReadPickled.java")


def _read_in_java(directory, *names):
    java, cp = java_executable(), class_path()
    if java is None or cp is None:
        pytest.skip("needs a JDK 25 and the built Java modules")
    out = subprocess.run([java, "--enable-native-access=ALL-UNNAMED", "-cp", cp, READER, directory] + list(names),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return [line.split() for line in out.stdout.splitlines()]


def test_java_reads_python_buffers_in_place(client, daemon):
    blob = bytes(range(256)) * 8
    client.put_object(depot.ObjectId.of("py-bytes"), {"k": blob, "m": memoryview(b"\x01" * 100)})
    values = [2.5] + [1.0] * 99
    objects = ["py-bytes"]
    try:
        import numpy as np
    except ImportError:
        np = None
    if np is not None:
        client.put_object(depot.ObjectId.of("py-array"), [np.array(values), "label"])
        objects.append("py-array")
    lines = _read_in_java(daemon.dir, *objects)
    by_object = {}
    for line in lines:
        by_object.setdefault(line[0], []).append(line[1:])
    stream, first, second = by_object["py-bytes"]
    assert stream[0] == "stream" and int(stream[1]) > 0
    assert first[:4] == ["0", "BYTES", str(len(blob)), str(sum(blob))] and first[5] == "0"
    assert second[:4] == ["1", "MEMORYVIEW", "100", "100"]
    if np is not None:
        _, array = by_object["py-array"]
        assert array[:3] == ["0", "PICKLE_BUFFER", str(8 * len(values))]
        assert float(array[4]) == 2.5 and array[5] == "0"
