"""Child processes for the cluster tests: each in a session of its own, its output in a file, and on close the
whole session (the process and everything it started that stayed in it) stopped and reaped."""

import os
import signal
import subprocess
import time

from conftest import child_env


def session_members(sid):
    """The live (not zombie) processes of session ``sid``."""
    members = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # exited meanwhile
        if int(fields[3]) == sid and fields[0] != "Z":  # state, ppid, pgrp, session
            members.append(int(name))
    return members


def alive(pid):
    """True while ``pid`` runs (a zombie is not running)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_until(predicate, what, timeout=30):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out after %s s waiting for %s" % (timeout, what))
        time.sleep(0.1)


class SessionProcess:
    """``cmd`` started in a new session, stdout and stderr into ``log``."""

    def __init__(self, cmd, log, env=None):
        self.cmd = [str(c) for c in cmd]
        self.log = str(log)
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(self.cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         env=env or child_env(), start_new_session=True)
        self.pid = self.proc.pid

    def output(self):
        with open(self.log, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def wait_for_output(self, text, timeout=60):
        """Waits until the output contains ``text``; fails naming the output when the process ended first."""
        deadline = time.monotonic() + timeout
        while text not in self.output():
            if self.proc.poll() is not None and text not in self.output():
                raise AssertionError("%s exited (status %s) without printing %r:\n%s"
                                     % (self.cmd[:3], self.proc.returncode, text, self.output()[-4000:]))
            if time.monotonic() > deadline:
                raise AssertionError("%s printed no %r within %s s:\n%s"
                                     % (self.cmd[:3], text, timeout, self.output()[-4000:]))
            time.sleep(0.1)

    def terminate(self, timeout=30):
        """SIGTERM to the process, then waits for it to exit (SIGKILL after ``timeout``)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)
        return self.proc.returncode

    def close(self):
        """Kills whatever is left of the session and reaps the process."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)
        for pid in session_members(self.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        wait_until(lambda: not session_members(self.pid), "session %d to end" % self.pid)
