"""A Depot daemon started from Python: ``depot.start()`` and ``depot.connect(start=True)``.

The daemon is the Java ``depot serve``. It is found, in order, in the jars bundled inside this package
(``depot/_jars/``, in the wheel that ``mvn package`` builds), from ``$DEPOT_HOME`` (a Depot checkout with
``depot-cli/target/depot.jar``, or an unpacked distribution with ``lib/depot-cli-*.jar``), the checkout this
package was installed from (or runs from), or a ``depot`` command on ``PATH``; the JDK (25 or newer) from
``$JAVA_HOME``, ``java`` on ``PATH``, then ``/usr/lib/jvm`` and ``/opt``.

Unless ``detach=True``, the daemon is watched by a small supervisor process (``_supervisor.py``) that holds
the read end of a pipe only this process writes to: when this process exits or dies, however it dies, the
pipe ends, and the supervisor stops the daemon and removes the store it created (unless ``keep=True``).
Several processes calling ``connect(start=True)`` at once start one daemon: starters take an exclusive
``flock`` on ``.NAME.start.lock`` beside the store directory, and whoever holds it first looks again for a
daemon before starting one.
"""

import atexit
import fcntl
import glob
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from urllib.parse import unquote, urlparse

from ._connection import Connection
from ._directory import default_directory
from .errors import DaemonNotRunningError, DepotError

__all__ = ["Daemon", "DaemonStartError", "connect_or_start", "find_java", "find_launcher", "parse_size", "start"]

HOME_ENV_NAME = "DEPOT_HOME"
#: the name pip knows this package by (the import name is ``depot``)
DISTRIBUTION_NAME = "depot-shm"
JAR_PATH = os.path.join("depot-cli", "target", "depot.jar")
#: the daemon's jars inside the installed package (the wheel carries them; a checkout has none)
BUNDLED_JARS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_jars")
CLI_MAIN = "dev.depot.cli.Main"
MIN_JAVA = 25
DEFAULT_CAPACITY = "1g"
START_TIMEOUT = 120.0
#: the store file's tables (index, client table) on top of the heap, at most; a guess for the space check
STORE_OVERHEAD = 64 << 20
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


class DaemonStartError(DepotError):
    """A daemon could not be started; the message says why and what to do."""


def parse_size(value):
    """Bytes from an int or a string such as ``"512m"``, ``"4g"``, ``"64k"`` or ``"1048576"``."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value <= 0:
            raise ValueError("a capacity must be positive, got %d" % value)
        return value
    if not isinstance(value, str):
        raise TypeError("a capacity is bytes (int) or a size such as '4g', got %s" % type(value).__name__)
    m = re.fullmatch(r"\s*(\d+)\s*([kmgt]?)(?:i?b)?\s*", value.lower())
    if not m or int(m.group(1)) == 0:
        raise ValueError("capacity %r is not a size such as '512m', '4g' or a positive number of bytes" % value)
    return int(m.group(1)) * _UNITS[m.group(2)]


def _java_major(home):
    try:
        with open(os.path.join(home, "release")) as f:
            m = re.search(r'^JAVA_VERSION="(\d+)', f.read(), re.M)
        return int(m.group(1)) if m else 0
    except OSError:
        return 0


def find_java():
    """The ``java`` of a JDK 25 or newer; raises DaemonStartError saying where it looked and what to install."""
    candidates = []
    if os.environ.get("JAVA_HOME"):
        candidates.append(os.environ["JAVA_HOME"])
    on_path = shutil.which("java")
    if on_path:
        candidates.append(os.path.dirname(os.path.dirname(os.path.realpath(on_path))))
    candidates += sorted(glob.glob("/usr/lib/jvm/*") + glob.glob("/opt/*jdk*") + glob.glob("/opt/java/*"),
                         key=_java_major, reverse=True)
    for home in candidates:
        java = os.path.join(home, "bin", "java")
        if os.access(java, os.X_OK) and _java_major(home) >= MIN_JAVA:
            return java
    raise DaemonStartError("no JDK %d or newer found (looked at $JAVA_HOME, java on PATH, /usr/lib/jvm, /opt): "
                           "install one (e.g. Temurin 25 from https://adoptium.net) and set JAVA_HOME to it"
                           % MIN_JAVA)


def _installed_from():
    """The directory pip installed this package from (PEP 610 ``direct_url.json``), or None."""
    try:
        from importlib.metadata import PackageNotFoundError, distribution
        text = distribution(DISTRIBUTION_NAME).read_text("direct_url.json")
    except (ImportError, PackageNotFoundError, OSError):
        return None
    try:
        url = urlparse(json.loads(text or "{}").get("url", ""))
    except ValueError:
        return None
    return unquote(url.path) if url.scheme == "file" else None


def _checkouts():
    """Depot checkouts this package may belong to: ``$DEPOT_HOME``, the one it runs from, the one it was
    installed from. Each as (where it came from, path)."""
    out = []
    if os.environ.get(HOME_ENV_NAME):
        out.append(("$" + HOME_ENV_NAME, os.environ[HOME_ENV_NAME]))
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if os.path.isfile(os.path.join(here, "bin", "depot")):
        out.append(("the checkout this package runs from", here))
    source = _installed_from()
    if source:
        out.append(("the checkout this package was installed from", os.path.dirname(os.path.abspath(source))))
    return out


def _java_command():
    return [find_java(), "--enable-native-access=ALL-UNNAMED"] + os.environ.get("DEPOT_JAVA_OPTS", "").split()


def find_launcher(use_path=True):
    """The command that runs the Depot CLI: ``[java, ..., -cp, depot/_jars/*, dev.depot.cli.Main]`` from the
    jars bundled in this package, ``[java, ..., -jar, depot.jar]`` from a checkout, or (``use_path``) ``[depot]``
    on PATH. Raises DaemonStartError naming what is missing and how to get it."""
    if glob.glob(os.path.join(BUNDLED_JARS, "depot-cli-*.jar")):
        return _java_command() + ["-cp", os.path.join(BUNDLED_JARS, "*"), CLI_MAIN]
    checkouts = _checkouts()
    unbuilt = None
    for origin, home in checkouts:
        # as bin/depot does, without its build check: a checkout's jar, or a distribution's lib/
        jar = os.path.join(home, JAR_PATH)
        if os.path.isfile(jar):
            return _java_command() + ["-jar", jar]
        distribution = not os.path.isfile(os.path.join(home, "pom.xml"))
        if distribution and glob.glob(os.path.join(home, "lib", "depot-cli-*.jar")):
            return _java_command() + ["-cp", os.path.join(home, "lib", "*"), CLI_MAIN]
        if unbuilt is None:
            unbuilt = (origin, home)
        if origin.startswith("$"):
            break  # DEPOT_HOME names the one to use
    on_path = shutil.which("depot") if use_path else None
    if on_path and unbuilt is None:
        return [on_path]
    if unbuilt is not None:
        origin, home = unbuilt
        raise DaemonStartError("the Depot launcher %s is not built (%s is %s): run `%s --help` once to build it "
                               "(needs Maven and a JDK 25)" % (os.path.join(home, JAR_PATH), home, origin,
                                                               os.path.join(home, "bin", "depot")))
    if not use_path:
        raise DaemonStartError("no Depot jars found: this %s has none in %s (only the wheel that `mvn package` "
                               "builds, depot-dist/target/*.whl, carries them); install that wheel, or set %s to a "
                               "Depot checkout (built with `bin/depot --help`) or an unpacked distribution"
                               % (DISTRIBUTION_NAME, BUNDLED_JARS, HOME_ENV_NAME))
    raise DaemonStartError("no Depot launcher found: set %s to a Depot checkout (built with `bin/depot --help`), "
                           "or put the `depot` command on PATH" % HOME_ENV_NAME)


def _check_space(directory, capacity):
    """A clear error, before starting, when a new store of ``capacity`` cannot fit where it would be created."""
    parent = os.path.dirname(os.path.abspath(directory)) or "/"
    try:
        st = os.statvfs(parent)
    except FileNotFoundError:
        raise DaemonStartError("cannot create a store in %s: %s does not exist" % (directory, parent)) from None
    free = st.f_bavail * st.f_frsize
    if capacity + STORE_OVERHEAD > free:
        raise DaemonStartError("a store of capacity %s does not fit in %s: it has %s free; pass a smaller "
                               "capacity, or free space there (df -h %s)"
                               % (_format(capacity), parent, _format(free), parent))


def _format(n):
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return "%.1f %s" % (n / size, unit)
    return "%d bytes" % n


class _StartLock:
    """An exclusive flock on ``.NAME.start.lock`` beside the store directory. The holder removes the file on
    release; a waiter that got the lock on a file already removed takes the new one instead."""

    def __init__(self, directory):
        directory = os.path.abspath(directory)
        self.path = os.path.join(os.path.dirname(directory), "." + os.path.basename(directory) + ".start.lock")
        self._fd = None

    def __enter__(self):
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                if os.path.exists(self.path) and os.stat(self.path).st_ino == os.fstat(fd).st_ino:
                    self._fd = fd
                    return self
            except BaseException:
                os.close(fd)
                raise
            os.close(fd)

    def __exit__(self, *exc):
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
        os.close(self._fd)
        self._fd = None


_started = []  # the daemons this process started and has not stopped: stopped at exit
_started_lock = threading.Lock()


def _forget_in_child():
    """A forked child does not own its parent's daemons: its exit must not stop them. (It inherits their
    lifelines, so they keep running until the child has exited too.)"""
    global _started_lock
    _started_lock = threading.Lock()
    _started.clear()


os.register_at_fork(after_in_child=_forget_in_child)


@atexit.register
def _stop_all():
    with _started_lock:
        daemons = list(_started)
    for d in daemons:
        if not d.detached:
            d.stop()


class Daemon:
    """A daemon started by ``depot.start()``. ``dir`` is its store directory, ``pid`` its process id.

    A context manager: leaving the block stops it. Unless detached, it also stops when this process exits
    or dies; its store is removed then unless it was there before or ``keep=True``.
    """

    def __init__(self, directory, pid, process, lifeline, detached, remove):
        self.dir = directory
        self.pid = pid
        self.detached = detached
        self._process = process  # the supervisor, or (detached) the daemon itself
        self._lifeline = lifeline
        self._remove = remove
        self._stopped = False

    @property
    def running(self):
        return not self._stopped and self._process.poll() is None

    def stop(self, timeout=30.0):
        """Stops the daemon (SIGTERM: clients see it go; their next request fails) and waits for it to exit.
        Harmless when stopped already."""
        if self._stopped:
            return
        self._stopped = True
        with _started_lock:
            if self in _started:
                _started.remove(self)
        if self._lifeline is not None:
            os.close(self._lifeline)  # the supervisor stops the daemon and cleans up
            self._lifeline = None
        elif self._process.poll() is None:
            self._process.send_signal(signal.SIGTERM)
        try:
            self._process.wait(timeout)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        if self.detached and self._remove:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    def __repr__(self):
        return "Daemon(%r, pid=%d%s%s)" % (self.dir, self.pid, ", detached" if self.detached else "",
                                           "" if self.running else ", stopped")


def _serving(directory):
    """The pid of the daemon serving ``directory``, or 0 (by connecting to its socket)."""
    try:
        conn = Connection(directory)
    except DaemonNotRunningError:
        return 0
    try:
        return conn.welcome.daemon_pid
    finally:
        conn.close()


def start(dir=None, capacity=DEFAULT_CAPACITY, spill_dir=None, detach=False, keep=False, log=None,
          timeout=START_TIMEOUT, max_clients=None, max_objects=None):
    """Starts a Depot daemon on the store in ``dir`` and waits until it serves.

    Parameters
    ----------
    dir : str, optional
        The store directory (default ``depot.default_directory()``); the store is created there with
        ``capacity`` bytes when there is none.
    capacity : int or str
        Heap size of a new store: bytes, or ``"512m"``, ``"4g"``...
    spill_dir : str, optional
        Passed to the daemon as ``--spill-dir`` (for daemons that spill evicted objects to disk).
    detach : bool
        When False (the default) the daemon stops when this process exits or dies. When True it keeps
        running, in a session of its own, until stopped (``Daemon.stop()``, ``kill PID``).
    keep : bool
        Keep the store directory when the daemon stops. Otherwise a store this daemon created is removed
        then (one that existed before is always kept).
    log : str, optional
        A file that the daemon's log is appended to (default: discarded).
    timeout : float
        Seconds to wait for the daemon to serve.
    max_clients : int, optional
        Client slots of a new store (``--max-clients``; default 1,024): each process with a client takes one.
    max_objects : int, optional
        Objects a new store can hold (``--max-objects``; default 3 per 64 KiB of capacity, at least 3,072).

    Returns
    -------
    Daemon

    Raises
    ------
    DaemonStartError
        No JDK 25, no built launcher, a store that does not fit, a daemon serving ``dir`` already, or a
        daemon that failed to start (with its last log lines).
    """
    directory = os.path.abspath(os.fspath(dir if dir is not None else default_directory()))
    limits = _store_limits(max_clients, max_objects)
    with _StartLock(directory):
        return _start_locked(directory, parse_size(capacity), spill_dir, detach, keep, log, timeout, limits)


def _store_limits(max_clients, max_objects):
    """The ``depot serve`` options for a new store's client table and index; checks the values first."""
    options = []
    if max_clients is not None:
        if isinstance(max_clients, bool) or not isinstance(max_clients, int) or not 2 <= max_clients <= 65535:
            raise ValueError("max_clients must be an int in 2..65535, got %r" % (max_clients,))
        options += ["--max-clients", str(max_clients)]
    if max_objects is not None:
        if isinstance(max_objects, bool) or not isinstance(max_objects, int) or max_objects < 1:
            raise ValueError("max_objects must be a positive int, got %r" % (max_objects,))
        options += ["--max-objects", str(max_objects)]
    return options


def _start_locked(directory, capacity, spill_dir, detach, keep, log, timeout, limits=()):
    running = _serving(directory)
    if running:
        raise DaemonStartError("a daemon (pid %d) already serves %s; use it with depot.connect(%r)"
                               % (running, directory, directory))
    existed = os.path.isdir(directory) and bool(os.listdir(directory))
    if not existed:
        _check_space(directory, capacity)
    command = find_launcher() + ["serve", "--dir", directory, "--capacity", str(capacity)]
    if spill_dir is not None:
        command += ["--spill-dir", os.path.abspath(os.fspath(spill_dir))]
    command += list(limits)
    remove = not keep and not existed
    log_file = open(log, "ab") if log is not None else subprocess.DEVNULL
    try:
        if detach:
            daemon = _start_detached(directory, command, log_file, remove, timeout)
        else:
            daemon = _start_supervised(directory, command, log_file, remove, timeout)
    finally:
        if log is not None:
            log_file.close()
    if not detach:
        with _started_lock:
            _started.append(daemon)
    return daemon


def _read_status(stream, timeout, what):
    """Lines from ``stream`` until the process writing it reports ready or failed, or ends."""
    deadline = time.monotonic() + timeout
    lines = []
    buf = b""
    fd = stream.fileno()
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise DaemonStartError("%s did not serve within %.0f s (a busy machine? pass a larger timeout=, and "
                                   "log=PATH to see its log)" % (what, timeout))
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            return lines, True
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            lines.append(line.decode("utf-8", "replace"))
            if lines[-1].startswith(("ready ", "depot: serving ")):
                return lines, False


def _start_supervised(directory, command, log_file, remove, timeout):
    supervisor = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_supervisor.py")
    read_end, write_end = os.pipe()  # both close-on-exec; the supervisor gets read_end as its stdin
    try:
        process = subprocess.Popen([sys.executable, supervisor, "--remove" if remove else "--keep", directory, "--"]
                                   + command, stdin=read_end, stdout=subprocess.PIPE, stderr=log_file,
                                   start_new_session=True)
    except BaseException:
        os.close(write_end)
        raise
    finally:
        os.close(read_end)
    try:
        lines, _ = _read_status(process.stdout, timeout, "the daemon for %s" % directory)
    except BaseException:
        os.close(write_end)
        process.wait()
        raise
    process.stdout.close()
    if lines and lines[-1].startswith("ready "):
        return Daemon(directory, int(lines[-1].split()[1]), process, write_end, False, remove)
    os.close(write_end)
    process.wait()
    raise _failed(directory, lines)


def _start_detached(directory, command, log_file, remove, timeout):
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
                               if log_file is subprocess.DEVNULL else log_file, start_new_session=True)
    try:
        lines, _ = _read_status(process.stdout, timeout, "the daemon for %s" % directory)
    except BaseException:
        process.kill()
        process.wait()
        raise
    if lines and lines[-1].startswith("depot: serving "):
        process.stdout.close()
        if process.stderr is not None:
            process.stderr.close()  # the daemon's later log lines are discarded (EPIPE is harmless to it)
        return Daemon(directory, process.pid, process, None, True, remove)
    process.wait()
    err = process.stderr.read().decode("utf-8", "replace") if process.stderr is not None else ""
    raise _failed(directory, ["failed %d" % process.returncode] + ["log " + l for l in err.splitlines()])


def _failed(directory, lines):
    status = next((l.split()[1] for l in lines if l.startswith("failed ")), "?")
    log = [l[4:] for l in lines if l.startswith("log ")]
    detail = "; ".join(l for l in log if l.strip())[-2000:] or "it printed nothing"
    return DaemonStartError("the daemon for %s exited with status %s before serving: %s" % (directory, status, detail))


def connect_or_start(connect, directory, capacity=None, detach=False, spill_dir=None, max_clients=None,
                     max_objects=None):
    """``connect(directory)``, a client of the daemon serving ``directory``, starting one (stopped when this
    process exits, unless ``detach``) when none serves, with ``capacity``, ``spill_dir``, ``max_clients`` and
    ``max_objects`` as ``start()`` takes them. Safe to call from several processes at once: one daemon starts,
    the others attach (to the daemon and store as they are: the options only shape a daemon and store started
    here). ``depot.connect(start=True)`` passes ``depot.Client`` as ``connect``, which raises
    ``DaemonNotRunningError`` when no daemon serves; this module does not import the client."""
    limits = _store_limits(max_clients, max_objects)
    try:
        return connect(directory)
    except DaemonNotRunningError:
        pass
    with _StartLock(directory):
        try:
            return connect(directory)  # another process started one while this one waited for the lock
        except DaemonNotRunningError:
            pass
        _start_locked(os.path.abspath(directory), parse_size(capacity or DEFAULT_CAPACITY), spill_dir, detach, False,
                      None, START_TIMEOUT, limits)
    return connect(directory)
