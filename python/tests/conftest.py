"""Fixtures: a store directory under /dev/shm and a Java daemon serving it, both always cleaned up."""

import importlib.abc
import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import uuid

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTHON_DIR = os.path.join(REPO, "python")
MODULES = ("depot-core", "depot-client", "depot-server")
DEFAULT_JDK = "/usr/lib/jvm/temurin-25-jdk-amd64"
CAPACITY = 64 << 20


class FoldersAreNotPackages(importlib.abc.MetaPathFinder):
    """Where a package the tests use is not installed, a test folder of the same name (``dask/``) would import as
    a namespace package in its place, since pytest puts this folder on ``sys.path``, and ``importorskip`` would
    not skip: importing such a name fails as a missing package does."""

    def __init__(self, names):
        self.names = frozenset(names)

    def find_spec(self, name, path=None, target=None):
        if name in self.names:
            raise ModuleNotFoundError("No module named %r (python/tests/%s is a folder of tests)" % (name, name),
                                      name=name)
        return None


def folders_shadowing_missing_packages(here):
    """The folders in ``here`` that ``import`` would take for a package: none of that name is installed."""
    here = os.path.abspath(here)
    names = []
    for name in sorted(os.listdir(here)):
        if name.startswith("_") or not name.isidentifier() or not os.path.isdir(os.path.join(here, name)):
            continue
        spec = importlib.util.find_spec(name) if name not in sys.modules else None
        if spec is not None and spec.origin in (None, "namespace") and all(
                os.path.dirname(os.path.abspath(p)) == here for p in spec.submodule_search_locations or ()):
            names.append(name)
    return names


sys.meta_path.insert(0, FoldersAreNotPackages(
    folders_shadowing_missing_packages(os.path.dirname(os.path.abspath(__file__)))))


def _jdk_major(home):
    try:
        with open(os.path.join(home, "release")) as f:
            m = re.search(r'JAVA_VERSION="(\d+)', f.read())
        return int(m.group(1)) if m else 0
    except OSError:
        return 0


def java_executable():
    """$JAVA_HOME if it is 25 or newer, else the default JDK 25; None when neither is there."""
    for home in (os.environ.get("JAVA_HOME"), DEFAULT_JDK):
        if home and _jdk_major(home) >= 25 and os.access(os.path.join(home, "bin", "java"), os.X_OK):
            return os.path.join(home, "bin", "java")
    return None


def class_path():
    """$DEPOT_CLASSPATH if set, else the modules' target/classes directories; None when they are not built."""
    if os.environ.get("DEPOT_CLASSPATH"):
        return os.environ["DEPOT_CLASSPATH"]
    dirs = [os.path.join(REPO, m, "target", "classes") for m in MODULES]
    probes = ["dev/depot/core/store/Store.class", "dev/depot/client/DepotClient.class",
              "dev/depot/server/DaemonMain.class"]
    if all(os.path.isfile(os.path.join(d, p)) for d, p in zip(dirs, probes)):
        return os.pathsep.join(dirs)
    return None


def require_launcher():
    """Skips the test when no daemon can be started (the launcher, depot-cli's jar, is not built); returns the
    launcher's command otherwise."""
    from depot import daemon
    try:
        return daemon.find_launcher()
    except daemon.DaemonStartError as e:
        pytest.skip(str(e))


@pytest.fixture
def fresh_dir():
    """A store directory that nothing serves yet; whatever is left in it is removed at the end."""
    path = os.path.join("/dev/shm", "depot-test-" + uuid.uuid4().hex)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def launcher():
    """Skips unless a daemon can be started: the launcher and the Java modules are built."""
    require_launcher()
    if java_executable() is None or class_path() is None:
        pytest.skip("needs a JDK 25 and the built Java modules")


def java_command(main, *args):
    java = java_executable()
    if java is None:
        pytest.skip("no JDK 25: set JAVA_HOME to one or install %s" % DEFAULT_JDK)
    cp = class_path()
    if cp is None:
        pytest.skip("the Java modules are not built: run `mvn -B -o install -DskipTests -pl %s`" % ",".join(MODULES))
    return [java, "--enable-native-access=ALL-UNNAMED", "-Xmx256m", "-cp", cp, main] + [str(a) for a in args]


def child_env():
    """The environment of child processes: they import the same depot as the tests (installed or checkout)."""
    import depot
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(os.path.abspath(depot.__file__))) + os.pathsep + env.get(
        "PYTHONPATH", "")
    return env


class Child:
    """A child process whose stdout lines can be awaited; killed and reaped on close."""

    def __init__(self, cmd):
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, env=child_env(),
                                     text=True)
        self._lines = []
        self._cond = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        for line in self.proc.stdout:
            with self._cond:
                self._lines.append(line.rstrip("\n"))
                self._cond.notify_all()
        with self._cond:
            self._lines.append(None)
            self._cond.notify_all()

    def await_line(self, prefix, timeout=30):
        with self._cond:
            def found():
                return any(l is None or l.startswith(prefix) for l in self._lines)
            if not self._cond.wait_for(found, timeout):
                raise AssertionError("child %d printed no line starting with %r within %s s (lines: %r)"
                                     % (self.proc.pid, prefix, timeout, self._lines))
            for i, l in enumerate(self._lines):
                if l is None:
                    raise AssertionError("child %d exited (status %s) before printing %r; it printed %r"
                                         % (self.proc.pid, self.proc.wait(), prefix, self._lines[:i]))
                if l.startswith(prefix):
                    del self._lines[:i + 1]
                    return l

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)

    def close(self):
        self.kill()
        self._reader.join(timeout=5)
        self.proc.stdout.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def python_child(code, *args):
    return Child([sys.executable, "-c", code] + [str(a) for a in args])


class Daemon:
    def __init__(self, directory, child):
        self.dir = directory
        self.child = child

    def stop(self):
        """SIGTERM (clean stop: the socket goes), then reap; SIGKILL if it does not stop."""
        proc = self.child.proc
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                pass
        self.child.close()


@pytest.fixture
def store_dir(fresh_dir):
    """``fresh_dir``, by the name of tests that serve the store themselves."""
    return fresh_dir


@pytest.fixture(scope="module")
def shared_daemon():
    """One daemon for a whole test module (each test uses its own ids): starting a JVM per test costs seconds."""
    path = os.path.join("/dev/shm", "depot-test-" + uuid.uuid4().hex)
    try:
        d = Daemon(path, Child(java_command("dev.depot.server.DaemonMain", "--dir", path, "--capacity", CAPACITY)))
        try:
            d.child.await_line("depot: serving", timeout=60)
            yield d
        finally:
            d.stop()
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def daemon(store_dir):
    cmd = java_command("dev.depot.server.DaemonMain", "--dir", store_dir, "--capacity", CAPACITY)
    d = Daemon(store_dir, Child(cmd))
    try:
        d.child.await_line("depot: serving", timeout=60)
        yield d
    finally:
        d.stop()


@pytest.fixture
def client(daemon):
    import depot
    c = depot.connect(daemon.dir)
    try:
        yield c
    finally:
        c.close()


def pytest_sessionstart(session):
    """bin/test runs the suite against the installed package: make sure that is what `import depot` found."""
    expected = os.environ.get("DEPOT_TEST_EXPECT_INSTALLED")
    if expected:
        import depot
        if not os.path.abspath(depot.__file__).startswith(os.path.abspath(expected) + os.sep):
            raise pytest.UsageError("expected the depot installed in %s, but imported %s" % (expected, depot.__file__))


def system_packages():
    """The Debian packages bin/lib/system-packages.sh installs for /usr/bin/python3 (its DEPOT_APT_PACKAGES)."""
    with open(os.path.join(REPO, "bin", "lib", "system-packages.sh")) as f:
        return re.search(r"DEPOT_APT_PACKAGES=\(([^)]*)\)", f.read()).group(1).split()
