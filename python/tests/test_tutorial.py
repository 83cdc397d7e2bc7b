"""The examples of docs/PYTHON.md, taken from the guide itself and run.

"Starting a daemon" and "Connecting" run in a process of their own (the daemons they start go with it), on
store directories of the test's. The blocks that work on objects run in order with an open ``client`` and an
``oid``, as the guide's text supplies them; the two Java fragments then run in a JVM of their own over the
array and the frame those blocks stored. The subscription's loop runs in a thread until the test closes it.
"""

import importlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid

import pytest

import depot
from conftest import child_env, class_path, java_executable

DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "PYTHON.md")

#: the sections whose Python blocks run in order over the test's client
ON_OBJECTS = ("Objects", "NumPy arrays", "Any Python object: `put_object`")


def _blocks(language):
    """(heading, code) of the guide's blocks in ``language``, in order."""
    if not os.path.isfile(DOC):
        pytest.skip("docs/PYTHON.md is not beside the tests (installed without the checkout)")
    with open(DOC) as f:
        text = f.read()
    found = []
    for section in re.split(r"\n## ", text):
        heading = section.split("\n", 1)[0]
        found += [(heading, code) for code in re.findall(r"```%s\n(.*?)```" % language, section, re.S)]
    return found


def _section(heading, language="python"):
    return [code for h, code in _blocks(language) if h == heading]


def test_every_python_block_is_run_here():
    runs = {"Starting a daemon", "Connecting", "Notifications: `subscribe`"} | set(ON_OBJECTS)
    assert {h for h, _ in _blocks("python")} == runs, "a section of PYTHON.md with Python that no test here runs"
    assert [h for h, _ in _blocks("java")] == ["NumPy arrays", "Any Python object: `put_object`"]


def _fresh_dir():
    return os.path.join("/dev/shm", "depot-test-" + uuid.uuid4().hex)


def test_starting_a_daemon_and_connecting_run_and_leave_no_store(launcher):
    default, alice, job = _fresh_dir(), _fresh_dir(), _fresh_dir()
    code = "\n".join(_section("Starting a daemon") + _section("Connecting"))
    for shown, used in (("/dev/shm/depot-alice", alice), ("/dev/shm/depot-job-17", job),
                        ('capacity="8g"', 'capacity="64m"'), ('capacity="4g"', 'capacity="64m"')):
        assert shown in code, "PYTHON.md no longer shows %s" % shown
        code = code.replace(shown, used)
    code += "\nimport os\nassert not os.path.exists(%r)\nprint(client.stat().capacity_bytes)\n" % job
    env = child_env()
    env["DEPOT_DIR"] = default
    try:
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=180)
        assert out.returncode == 0, out.stderr
        assert out.stdout.split() == [str(64 << 20)], out.stdout  # the last client is alice's store
        deadline = time.monotonic() + 60
        while any(os.path.exists(d) for d in (default, alice)):  # each supervisor removes its store
            assert time.monotonic() < deadline, "the stores of the daemons the guide started are still there"
            time.sleep(0.1)
    finally:
        for d in (default, alice, job):
            shutil.rmtree(d, ignore_errors=True)


def _run_java_fragments(store):
    java, cp = java_executable(), class_path()
    if java is None or cp is None:
        pytest.skip("needs a JDK 25 and the built Java modules")
    body = "\n".join(_section(h, "java")[0] for h in ("NumPy arrays", "Any Python object: `put_object`"))
    source = ("import dev.depot.client.*;\nimport java.lang.foreign.*;\n\n"
              "public class PythonGuideFragments {\n"
              "    public static void main(String[] args) throws Exception {\n"
              "        try (DepotClient depot = DepotClient.open()) {\n" + body +
              "        }\n        System.out.println(\"fragments ran\");\n    }\n}\n")
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "PythonGuideFragments.java")
        with open(path, "w") as f:
            f.write(source)
        env = child_env()
        env["DEPOT_DIR"] = store
        out = subprocess.run([java, "--enable-native-access=ALL-UNNAMED", "-cp", cp, path], env=env,
                             capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[-2:] == ["fragments ran", ""], out.stdout


def test_the_guide_runs(daemon, monkeypatch):
    monkeypatch.setenv("DEPOT_DIR", daemon.dir)
    stored = [depot.ObjectId.of(n) for n in ("weights", "frame")]
    with depot.connect() as client:
        try:
            for heading in ON_OBJECTS:
                for number, code in enumerate(_section(heading), 1):
                    _run_on_objects(client, "PYTHON.md %s block %d" % (heading, number), code)
            if all(client.contains(oid) for oid in stored):  # where numpy and pandas are installed
                _run_java_fragments(daemon.dir)
        finally:
            for oid in stored:
                if client.contains(oid):
                    client.delete(oid)


def _run_on_objects(client, name, code):
    needs = [m for m in ("numpy", "pandas") if m in code or (m == "numpy" and "np." in code)]
    if any(importlib.util.find_spec(m) is None for m in needs):
        return  # the environments that have them run it
    code = code.replace("10_000_000", "100_000")  # the same frame, small enough for the test's store
    np = importlib.import_module("numpy") if needs else None
    a, b, c = (depot.ObjectId.of(n) for n in "abc")
    client.put(a, b"a")
    client.put(c, b"c")  # b is missing: get_many's None
    scope = {"depot": depot, "client": client, "oid": depot.ObjectId.random(), "np": np, "a": a, "b": b, "c": c}
    try:
        exec(compile(code, name, "exec"), scope)
    finally:
        for key in ("view", "weights", "frame", "views"):
            scope.pop(key, None)
    for oid in (a, c, depot.ObjectId.of("greeting")):
        if client.contains(oid):
            client.delete(oid)


class _Subscribing:
    """The client as the block sees it: tells the test when the block has subscribed, and hands over the
    subscription, which the test closes to end the loop."""

    def __init__(self, client):
        self.client = client
        self.subscribed = threading.Event()
        self.subscription = None

    def subscribe(self):
        self.subscription = self.client.subscribe()
        self.subscribed.set()
        return self.subscription


def test_the_subscription_prints_each_event_until_closed(daemon, monkeypatch):
    monkeypatch.setenv("DEPOT_DIR", daemon.dir)
    (code,) = _section("Notifications: `subscribe`")
    printed, failures = [], []
    seen = threading.Event()
    with depot.connect() as client:
        subscribing = _Subscribing(client)
        scope = {"client": subscribing, "print": lambda *words: (printed.append(words), seen.set())}

        def loop():
            try:
                exec(compile(code, "PYTHON.md subscribe block", "exec"), scope)
            except BaseException as e:  # noqa: B902 - the test reports it
                failures.append(e)

        thread = threading.Thread(target=loop, daemon=True)
        thread.start()
        oid = depot.ObjectId.of("subscribed")
        try:
            assert subscribing.subscribed.wait(60), "the block did not subscribe"
            client.put(oid, b"12345", metadata=b"m")  # events come from the moment of subscribing on
            assert seen.wait(60), "the loop printed no event"
        finally:
            if subscribing.subscription is not None:
                subscribing.subscription.close()
            thread.join(60)
            if client.contains(oid):
                client.delete(oid)
        assert not thread.is_alive(), "the loop did not end when its subscription was closed"
        assert not failures, failures
    assert printed[0][:4] == ("sealed", oid.hex(), 5, 1)
