"""`depot bench dask`: depot.dask beside Dask's own schedulers, dask-on-ray and LocalCluster, all measured in this
run. Prints one JSON object per case: {"case", "figures", "baseline", "ratio", "target", "met"}.

    python3 dask_bench.py STORE_DIR CAPACITY [--quick] [--cases abcd] [--warm-computes N]
                                                                   (it starts the store's daemon itself)

Cases: (a) the user's pipeline (GIL-holding tasks making 8 MiB arrays, pairwise combines, a reduction);
(b) broadcast of one large array to 16 tasks with share(), peak memory; (c) per-task overhead of 10,000 tasks
with 1 KiB results; (d) a second process computing the same graph through depot.dask.Cache.

Figures: wall time and CPU seconds of every process involved (this one, its descendants and the store's daemon)
from the fastest of several unsampled runs; peak memory (sum of their PSS, sampled every 20 ms) from one more run
of the same graph. Reading PSS costs milliseconds of CPU per process, so sampling during the timed runs would
slow most the schedulers that keep both cores busy.

Interpreters (a full run only; see dask_bench_env.py): when this interpreter lacks Ray, the driver runs itself
again in the benchmark environment (built once per machine, with Ray). LocalCluster is measured by this script
under an interpreter that has `distributed` (Debian's /usr/bin/python3), beside depot.dask and the threaded
scheduler under the same interpreter, and merged into case (a). A baseline that is not installed is reported as
such, with the command that would install it.

The driver's modules, beside it: dask_bench_cases.py (the cases), dask_bench_graphs.py (the graphs they compute),
dask_bench_measure.py (measuring and reporting), dask_bench_schedulers.py (LocalCluster and dask-on-ray),
dask_bench_references.py (the leaves-only ceiling and the static schedule), dask_bench_parts.py (what child
drivers measure under other interpreters), dask_bench_env.py (the benchmark environment) and procfs.py.
"""

import contextlib
import importlib.util
import os
import sys
import types

import dask_bench_env
import dask_bench_graphs
import dask_bench_measure
from dask_bench_cases import case_broadcast, case_cache, case_overhead, case_pipeline
from dask_bench_measure import note
from dask_bench_parts import PART_DASK_ON_RAY, PART_LOCAL_CLUSTER, run_dask_on_ray_part, run_local_cluster_part

SKIPPED = 3  # exit status: this interpreter lacks Dask or NumPy


def _graphs_by_value():
    """The graphs' functions travel by value, as the functions of a user's script do (cloudpickle comes with
    Dask; without it the check for Dask below reports the skip)."""
    try:
        import cloudpickle
    except ImportError:
        return
    dask_bench_graphs.travel_by_value(cloudpickle)


def _reexec_in_env(argv):
    """A full run whose interpreter lacks Ray runs again in the benchmark environment (built when missing)."""
    if os.environ.get(dask_bench_env.IN_ENV_NAME) or importlib.util.find_spec("ray") is not None:
        return
    python = dask_bench_env.ensure_env()
    if python is None:
        return
    note("running in the benchmark environment %s (it has Ray)" % python)
    os.environ[dask_bench_env.IN_ENV_NAME] = "1"
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(python, [python, os.path.abspath(__file__), *argv])


def _die_with_parent():
    """The benchmark's JVM kills this driver when it stops; if the JVM itself is killed, the kernel does (Linux)."""
    try:
        import ctypes
        import signal
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def main(argv):
    directory, capacity = argv[0], argv[1]
    _die_with_parent()
    _graphs_by_value()
    quick = "--quick" in argv[2:]
    cases = argv[argv.index("--cases") + 1] if "--cases" in argv[2:] else "abcd"
    if "--warm-computes" in argv[2:]:
        dask_bench_measure.WARM_COMPUTES = int(argv[argv.index("--warm-computes") + 1])
    if "--part" in argv[2:]:
        i = argv.index("--part")
        if argv[i + 1] == PART_LOCAL_CLUSTER:
            run_local_cluster_part(directory, argv[i + 2])
            return
        if argv[i + 1] == PART_DASK_ON_RAY:
            run_dask_on_ray_part(argv[i + 2])
            return
        raise SystemExit("unknown part %r" % argv[i + 1])
    if not quick:
        _reexec_in_env(argv)
    try:
        import dask  # noqa: F401
        import numpy  # noqa: F401
    except ImportError as e:
        note("skipped: %s (%s); set DEPOT_BENCH_PYTHON to an interpreter with dask and numpy" % (e, sys.executable))
        sys.exit(SKIPPED)
    import depot
    import depot.dask
    try:
        # a store served already (--quick from the smoke test: the benchmark's JVM serves it): attach
        with depot.connect(directory) as probe:
            daemon = contextlib.nullcontext(types.SimpleNamespace(pid=probe.daemon_pid))
    except depot.DaemonNotRunningError:
        # the store's daemon is started here, as a user's program would (and stops, removing the store, at the end)
        daemon = depot.start(directory, capacity=capacity)
    with daemon as daemon:
        with depot.dask.Scheduler(workers=2, dir=directory) as s:
            if "a" in cases:
                case_pipeline(s, [daemon.pid], quick, directory, capacity)
            if "b" in cases:
                case_broadcast(s, [daemon.pid], quick)
            if "c" in cases:
                case_overhead(s, [daemon.pid], quick, directory, capacity)
            if "d" in cases:
                case_cache(s, quick)


if __name__ == "__main__":
    main(sys.argv[1:])
