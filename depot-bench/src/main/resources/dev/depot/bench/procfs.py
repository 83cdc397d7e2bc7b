"""What ``/proc`` says about processes, for ``dask_bench.py``'s memory, CPU and page-fault figures (Linux only).

The other drivers measure with psutil, which has no minor page faults."""

import os

__all__ = ["cpu_seconds", "minor_faults", "process_tree", "pss_bytes"]


def _children(pid):
    """The children of every thread of ``pid`` (``/proc/PID/task/TID/children`` lists only those that thread
    started: distributed's nannies and their workers are started from event-loop threads)."""
    out = []
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return out
    for tid in tids:
        try:
            with open("/proc/%d/task/%s/children" % (pid, tid)) as f:
                out.extend(int(p) for p in f.read().split())
        except OSError:
            pass
    return out


def process_tree(roots):
    """The pids of ``roots`` and of all their descendants that are alive now."""
    out, stack = set(), list(roots)
    while stack:
        pid = stack.pop()
        if pid not in out:
            out.add(pid)
            stack.extend(_children(pid))
    return out


def pss_bytes(pid):
    """The proportional set size of ``pid`` (shared pages divided among the processes mapping them), or 0."""
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


#: fields of /proc/PID/stat counted from the one after the command name's closing parenthesis (proc(5) numbers
#: them from 1 at the pid: minflt is its 10th, utime 14th, stime 15th)
STAT_MINFLT = 7
STAT_UTIME = 11
STAT_STIME = 12


def _stat_fields(pid):
    """The fields of /proc/PID/stat after the command name (which may hold spaces and parentheses)."""
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()


def cpu_seconds(pid):
    """User plus system CPU seconds of ``pid`` so far, or 0."""
    try:
        fields = _stat_fields(pid)
        return (int(fields[STAT_UTIME]) + int(fields[STAT_STIME])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def minor_faults(pid):
    """The minor page faults of ``pid`` so far, or 0."""
    try:
        return int(_stat_fields(pid)[STAT_MINFLT])
    except (OSError, IndexError, ValueError):
        return 0
