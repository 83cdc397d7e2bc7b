"""This process as the store knows it: its identity in the client table, and which side of a fork it is on.

The identity is Java's ``dev.depot.core.sys.ProcessIdentity``: ``pid << 32 | start ticks & 0xffffffff``, the
start time being field 22 of ``/proc/PID/stat``, so pid reuse cannot make a dead client look alive.
"""

import os
import threading

_fork_generation = 0
_fork_lock = threading.Lock()
_after_fork = []


def start_ticks(pid):
    """Start time of ``pid`` in clock ticks since boot, or -1 when it does not exist (or is a zombie)."""
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            stat = f.read()
    except OSError:
        return -1
    # The command name (field 2) may hold spaces and parentheses: parse from the last ')'.
    close = stat.rfind(b")")
    fields = stat[close + 2:].split(b" ")
    if close < 0 or len(fields) < 20 or fields[0] in (b"Z", b"X"):
        return -1
    return int(fields[19])


def state_of(identity):
    """What became of the process whose packed identity is ``identity``: ``"running"`` (or sleeping: any live
    state but stopped), ``"stopped"`` (by a signal such as SIGSTOP, or by a debugger) or ``"gone"`` (exited, a
    zombie, or its pid now names another process)."""
    pid = identity >> 32
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            stat = f.read()
    except OSError:
        return "gone"
    close = stat.rfind(b")")
    fields = stat[close + 2:].split(b" ")
    if close < 0 or len(fields) < 20 or fields[0] in (b"Z", b"X", b"x"):
        return "gone"
    if int(fields[19]) & 0xFFFFFFFF != identity & 0xFFFFFFFF:
        return "gone"
    return "stopped" if fields[0] in (b"T", b"t") else "running"


def identity_of(pid):
    """The packed identity of ``pid``, or 0 when there is no such process."""
    ticks = start_ticks(pid)
    return 0 if ticks < 0 else (pid << 32) | (ticks & 0xFFFFFFFF)


def identity():
    """The packed identity of this process (computed afresh: it changes in a forked child)."""
    return identity_of(os.getpid())


def fork_generation():
    """A number that changes in a child after ``os.fork()``: what a parent pinned is not the child's."""
    return _fork_generation


def on_fork_in_child(callback):
    """Calls ``callback()`` in every child after a fork (e.g. to replace locks another thread held)."""
    with _fork_lock:
        _after_fork.append(callback)


def _in_child():
    global _fork_generation, _fork_lock
    _fork_generation += 1
    _fork_lock = threading.Lock()
    for callback in list(_after_fork):
        callback()


os.register_at_fork(after_in_child=_in_child)
