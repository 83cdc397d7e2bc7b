"""The pool's worker processes (``WorkerProcess``: started, stopped, sent messages, their pipes and pidfds)."""

import itertools
import json
import multiprocessing.connection
import os
import socket
import subprocess
import sys
import threading

from . import _transport
from ._functions import SentFunctions

__all__ = ["WorkerProcess", "Workers", "WorkerDiedError", "WorkerStartError", "WorkerTaskError"]

START_TIMEOUT = 120.0
STOP_TIMEOUT = 10.0
#: a worker whose pipe closed is given this long to exit before it is killed: it can run nothing more, and its
#: receiving thread waits for it before the compute hears of its tasks
DIED_GRACE_SECONDS = 1.0


class WorkerDiedError(RuntimeError):
    """A worker process died while it ran a task (killed, out of memory, a crash in native code)."""


class WorkerTaskError(RuntimeError):
    """A worker could not read the tasks it was sent (a function it cannot import, say)."""


class WorkerStartError(RuntimeError):
    """A worker process could not start or could not connect to the store."""


class WorkerProcess:
    """A worker process started with ``subprocess`` (so the caller's main module is never re-imported, as
    multiprocessing's spawn would), talking over a socket pair; its death shows as the end of the pipe and on a
    pidfd."""

    def __init__(self, directory, inline_bytes, index):
        self.index = index
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        env = dict(os.environ)
        env[_transport.SYS_PATH_ENV_NAME] = json.dumps(sys.path)
        package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env["PYTHONPATH"] = package_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-c", "from depot.dask._worker import run; run()",
                 str(theirs.fileno()), directory, str(inline_bytes), str(_transport.PROTOCOL_VERSION)],
                pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, env=env, start_new_session=False)
        finally:
            theirs.close()
        self.conn = multiprocessing.connection.Connection(ours.detach())
        self.pid = self.process.pid
        try:
            self.sentinel = os.pidfd_open(self.pid)
        except (AttributeError, OSError):
            self.sentinel = None
        self.inflight = {}
        # raw ids of held results to forget, sent with the next message (under send_lock)
        self.pending_drops = []
        # the by-value functions its table holds; messages are pickled against it and sent in its order
        self.sent = SentFunctions()
        self.send_lock = threading.Lock()
        self.alive = True
        self.ready = threading.Event()
        self.gone = threading.Event()
        self.start_error = None

    def send(self, message):
        """Sends ``message`` (a ``_transport`` message); a worker that died is noticed by its receiving thread."""
        data = _transport.encode(message)
        with self.send_lock:
            self.send_encoded(data)

    def send_encoded(self, data):
        """Sends an encoded message, holding ``send_lock`` (or, to stop the worker, not)."""
        try:
            self.conn.send_bytes(data)
        except OSError:
            pass

    def exitcode(self, timeout):
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def reap(self, grace=DIED_GRACE_SECONDS):
        """Its exit status, after ``grace`` seconds to exit by itself and then a kill; None if even that failed."""
        code = self.exitcode(grace)
        if code is None:
            self.kill()
            code = self.exitcode(STOP_TIMEOUT)
        return code

    @staticmethod
    def how_it_ended(code):
        """``"was killed by signal 9"`` or ``"exited with status 1"``."""
        return "was killed by signal %d" % -code if code is not None and code < 0 else "exited with status %s" % code

    def kill(self):
        if self.process.poll() is None:
            try:
                self.process.kill()
            except ProcessLookupError:
                pass

    def close_handles(self):
        self.conn.close()
        if self.sentinel is not None:
            try:
                os.close(self.sentinel)
            except OSError:
                pass
            self.sentinel = None


class Workers:
    """The pool's worker processes in their order (a replacement takes a dead one's place); read and changed under
    the pool's lock."""

    def __init__(self, size, directory, inline_bytes):
        self._directory = directory
        self._inline_bytes = inline_bytes
        self._indexes = itertools.count(0)
        self._all = []
        self._all.extend(self._spawn() for _ in range(size))

    def _spawn(self):
        return WorkerProcess(self._directory, self._inline_bytes, next(self._indexes))

    def await_ready(self):
        """Waits for every worker to connect to the store; WorkerStartError names one that did not."""
        for w in list(self._all):
            if not w.ready.wait(START_TIMEOUT) or w.start_error is not None:
                raise WorkerStartError("depot.dask worker %d did not start%s" % (
                    w.pid, ": " + w.start_error if w.start_error else " within %d s" % START_TIMEOUT))

    def __iter__(self):
        return iter(self._all)

    def __len__(self):
        return len(self._all)

    def __getitem__(self, index):
        return self._all[index]

    def alive(self):
        return [w for w in self._all if w.alive]

    def any_alive(self):
        return any(w.alive for w in self._all)

    def by_pid(self, pid):
        """The live worker ``pid``, or None."""
        for w in self._all:
            if w.pid == pid and w.alive:
                return w
        return None

    def replace(self, dead):
        """A new worker in ``dead``'s place, returned."""
        new = self._all[self._all.index(dead)] = self._spawn()
        return new

