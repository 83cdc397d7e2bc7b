"""The processes ``dask_bench.py`` measures: their tree, memory, CPU (through psutil) and minor page faults (from
``/proc``: psutil does not report them). Linux only."""

import psutil

__all__ = ["cpu_seconds", "minor_faults", "process_tree", "pss_bytes"]


def process_tree(roots):
    """The pids of ``roots`` and of all their descendants that are alive now (also children that a thread other
    than the main one started: distributed's nannies start their workers from event-loop threads)."""
    out = set()
    for root in roots:
        try:
            process = psutil.Process(root)
            out.add(root)
            out.update(child.pid for child in process.children(recursive=True))
        except psutil.Error:
            pass
    return out


def pss_bytes(pid):
    """The proportional set size of ``pid`` (shared pages divided among the processes mapping them), or 0."""
    try:
        return psutil.Process(pid).memory_full_info().pss
    except psutil.Error:
        return 0


def cpu_seconds(pid):
    """User plus system CPU seconds of ``pid`` so far, or 0."""
    try:
        times = psutil.Process(pid).cpu_times()
    except psutil.Error:
        return 0.0
    return times.user + times.system


#: minflt's index among the fields of /proc/PID/stat after the command name's closing parenthesis (proc(5) numbers
#: the fields from 1 at the pid: minflt is the 10th)
STAT_MINFLT = 7


def minor_faults(pid):
    """The minor page faults of ``pid`` so far, or 0."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return int(f.read().rsplit(")", 1)[1].split()[STAT_MINFLT])
    except (OSError, IndexError, ValueError):
        return 0
