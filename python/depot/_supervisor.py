"""Runs a Depot daemon for a Python process, and stops it when that process goes (standard library only).

Started by ``depot.daemon`` as ``python _supervisor.py (--remove|--keep) DIR -- COMMAND...``, with

- stdin: the lifeline, the read end of a pipe whose write end only the starting process holds. End of file
  on it means that process closed it (``Daemon.stop()``) or exited or died, however it died;
- stdout: one status line for the starter: ``ready PID`` once the daemon serves, or ``failed STATUS``
  followed by the daemon's last log lines;
- stderr: where the daemon's log goes.

On the lifeline's end, SIGTERM, SIGINT or SIGHUP it stops the daemon with SIGTERM (SIGKILL after a grace
period) and, with ``--remove``, removes the store directory if its daemon served it. The daemon gets SIGTERM should this supervisor
die first (``PR_SET_PDEATHSIG``). It runs in a session of its own, so a Ctrl-C at the terminal reaches the
starter only: the starter decides.
"""

import collections
import ctypes
import os
import selectors
import shutil
import signal
import subprocess
import sys
import threading

READY_PREFIX = b"depot: serving "
PR_SET_PDEATHSIG = 1
GRACE_SECONDS = 20


class _Stop(Exception):
    pass


def _die_with_parent():
    """In the daemon's process, before exec: SIGTERM when this supervisor dies (single-threaded here)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _on_signal(signum, frame):
    raise _Stop()


def _say(line):
    try:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
    except (BrokenPipeError, OSError):
        pass  # the starter is gone; nobody to tell


def main(argv):
    mode, directory, sep, command = argv[0], argv[1], argv[2], argv[3:]
    if mode not in ("--remove", "--keep") or sep != "--" or not command:
        sys.stderr.write("usage: _supervisor.py (--remove|--keep) DIR -- COMMAND...\n")
        return 2
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, _on_signal)
    daemon = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              preexec_fn=_die_with_parent)
    tail = collections.deque(maxlen=30)

    def relay_log():
        for line in daemon.stderr:
            tail.append(line.decode("utf-8", "replace").rstrip("\n"))
            try:
                sys.stderr.buffer.write(line)
                sys.stderr.flush()
            except (OSError, ValueError):
                pass

    logger = threading.Thread(target=relay_log, daemon=True)
    logger.start()
    ready = False
    try:
        with selectors.DefaultSelector() as sel:
            sel.register(sys.stdin.fileno(), selectors.EVENT_READ, "lifeline")
            sel.register(daemon.stdout.fileno(), selectors.EVENT_READ, "daemon")
            pending = b""
            while True:
                for key, _ in sel.select():
                    if key.data == "lifeline":
                        if not os.read(key.fd, 4096):
                            raise _Stop()
                        continue
                    chunk = os.read(key.fd, 4096)
                    if not chunk:
                        raise _Stop()  # the daemon closed its stdout: it is exiting
                    pending += chunk
                    while not ready and b"\n" in pending:
                        line, pending = pending.split(b"\n", 1)
                        if line.startswith(READY_PREFIX):
                            ready = True
                            _say("ready %d" % daemon.pid)
                    if ready:
                        pending = b""
    except _Stop:
        pass
    finally:
        for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(s, signal.SIG_IGN)
        if daemon.poll() is None:
            daemon.send_signal(signal.SIGTERM)
            try:
                daemon.wait(GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                daemon.kill()
        status = daemon.wait()
        logger.join(5)
        # Only a store this daemon served is ours to remove: a daemon that never served (another one took the
        # directory first, say) must not delete what somebody else created there meanwhile.
        if mode == "--remove" and ready:
            shutil.rmtree(directory, ignore_errors=True)
        if not ready:
            _say("failed %d" % status)
            for line in list(tail):
                _say("log " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
