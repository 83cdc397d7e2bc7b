"""The parts of `depot bench dask` run by a child driver (dask_bench.py ``--part``), each under an interpreter of
its own: dask-on-ray (in this interpreter, in a process tree of Ray's) and LocalCluster (under an interpreter
that has `distributed`, beside depot.dask and the threaded scheduler there)."""

import importlib.util
import json
import os
import subprocess
import sys

import dask_bench_env
import dask_bench_graphs
import dask_bench_measure
from dask_bench_graphs import dask_compute_small, overhead_graph, pipeline
from dask_bench_measure import WARM_LOOPS, figures_of, measure, measure_interleaved, median_of_rounds
from dask_bench_references import StaticSchedule, TwoProcessCeiling
from dask_bench_schedulers import dask_on_ray, local_cluster

#: the driver, which runs a part given ``--part``
DRIVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dask_bench.py")
PART_LOCAL_CLUSTER = "local-cluster"
PART_DASK_ON_RAY = "dask-on-ray"
#: the child drivers of baselines are stopped after this long (``run_part``): Ray hung once after ``ray.init`` here
#: (2026-12-02), and in this process it would have hung the whole benchmark
DASK_ON_RAY_TIMEOUT_S = 300
LOCAL_CLUSTER_TIMEOUT_S = 600


def run_part(python, directory, capacity, part, params, timeout):
    """The JSON object this script prints when run as a child driver (``--part part params``) under ``python``, or
    why there is none (a string: it failed, or it did not finish within ``timeout`` seconds and was killed with
    every process of its process group, the baseline's own included). A process group and not a session: the
    kernel's autogroup shares the CPU between sessions, and the child's figures must see the machine as this
    driver does."""
    import signal
    group = {"process_group": 0} if sys.version_info >= (3, 11) else {"preexec_fn": os.setpgrp}
    child = subprocess.Popen([python, DRIVER, directory, str(capacity), "--part", part,
                              json.dumps(params), "--warm-computes", str(dask_bench_measure.WARM_COMPUTES)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **group)
    try:
        out, err = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = child.communicate()
        return "timed out after %d s under %s (killed): %s" % (timeout, python, err[-1000:])
    for line in out.splitlines():
        if line.startswith("{"):
            return json.loads(line)
    return "failed under %s (exit %d): %s" % (python, child.returncode, err[-1500:])


def dask_on_ray_part(directory, capacity, spec):
    """dask-on-ray's figures on the graph ``spec`` names (a dict: ``run_dask_on_ray_part``), measured by a child
    driver whose process tree is Ray's processes, as this driver's was, or why they could not be (a string)."""
    why = ray_missing()
    if why is not None:
        return why
    return run_part(sys.executable, directory, capacity, PART_DASK_ON_RAY, spec, DASK_ON_RAY_TIMEOUT_S)


def run_dask_on_ray_part(params):
    """In the child driver: dask-on-ray on case (a)'s pipeline (``{"graph": "pipeline", "tasks", "loops", "n"}``,
    warmed up as the other schedulers, best of 2) or case (c)'s graph (``{"graph": "overhead", "n"}``, after a
    small compute, one run); prints one JSON object, ``figures_of("dask_on_ray", ...)``."""
    import ray.cloudpickle
    dask_bench_graphs.travel_by_value(ray.cloudpickle)
    spec = json.loads(params)
    with dask_on_ray() as ray_get:
        if spec["graph"] == "pipeline":
            g = pipeline(spec["tasks"], spec["loops"], spec["n"])
            best, peak = measure(g, ray_get, [], 2, warm_graph=pipeline(spec["tasks"], WARM_LOOPS, spec["n"]))
        else:
            dask_compute_small(ray_get)
            best, peak = measure(overhead_graph(spec["n"]), ray_get, [], 1, warm=False)
    print(json.dumps(figures_of("dask_on_ray", best, peak)), flush=True)


def ray_missing():
    """None when dask-on-ray can be measured here, else why not and how to install it."""
    if importlib.util.find_spec("ray") is None:
        return "not installed: %s -m pip install --retries 0 'ray==2.58.0' (or let the full run build its " \
               "environment: %s)" % (sys.executable, dask_bench_env.install_command())
    return None


def local_cluster_part(directory, capacity, tasks, loops, n, reps):
    """Case (a)'s LocalCluster figures (a dict), measured by this script under an interpreter with
    ``distributed``, or why they could not be (a string)."""
    python, versions = dask_bench_env.distributed_python()
    if python is None:
        return versions
    out = run_part(python, directory, capacity, PART_LOCAL_CLUSTER,
                   {"tasks": tasks, "loops": loops, "n": n, "reps": reps}, LOCAL_CLUSTER_TIMEOUT_S)
    if isinstance(out, dict):
        out["local_cluster_python"] = "%s (%s)" % (python, versions)
    return out


def run_local_cluster_part(directory, params):
    """Under the interpreter with ``distributed``: depot.dask, threads and LocalCluster on case (a)'s graph;
    prints one JSON object."""
    import depot.dask
    p = json.loads(params)
    g = pipeline(p["tasks"], p["loops"], p["n"])
    with depot.connect(directory) as probe:
        extra = [probe.daemon_pid]
    warm = pipeline(p["tasks"], WARM_LOOPS, p["n"])
    ceiling = TwoProcessCeiling(p["tasks"], p["loops"], p["n"])
    static = StaticSchedule(directory, p["tasks"], p["loops"], p["n"])
    blocks = []
    try:
        with depot.dask.Scheduler(workers=2, dir=directory) as s:
            # LocalCluster in blocks of rounds of its own, each after a block of depot.dask's and threads', never
            # beside them: idle, a two-worker LocalCluster took ~117 ms of CPU a second here (event loop ticks,
            # monitors, profilers), 44 ms in this process, whose GIL depot.dask's caller needs; beside depot.dask
            # it slowed its computes by ~6 %. Stopping it (SIGSTOP) between its runs slowed LocalCluster's own by
            # 5-10 %. So each block starts a LocalCluster and closes it. depot.dask's workers idle take no CPU.
            done = 0
            for size in _blocks(p["reps"], LOCAL_CLUSTER_BLOCKS):
                blocks.append(measure_interleaved(g, {"depot": s, "threads": "threads"}, extra, size,
                                                  warm_graph=warm if done == 0 else None,
                                                  references=(ceiling, static), first_round=done))
                with local_cluster() as get:
                    blocks.append(measure_interleaved(g, {"local_cluster": get}, extra, size, warm_graph=warm,
                                                      first_round=done))
                done += size
    finally:
        ceiling.close()
        static.close()
    runs, walls = merge_blocks(blocks)
    out = {"depot_" + k: v for k, v in figures_of("depot", *runs["depot"]).items()}
    out.update(figures_of("threads", *runs["threads"]))
    out.update(figures_of("local_cluster", *runs["local_cluster"]))
    out["two_process_ceiling_wall_s"] = round(ceiling.best, 4)
    out["two_vcpu_limit_wall_s"] = round(ceiling.limit, 4)
    out["static_schedule_wall_s"] = round(static.best, 4)
    out["local_cluster_speedup_median_of_rounds"] = median_of_rounds(walls["local_cluster"], walls["depot"])
    out["threads_speedup_median_of_rounds"] = median_of_rounds(walls["threads"], walls["depot"])
    print(json.dumps(out), flush=True)


#: the LocalCluster part's rounds come in this many blocks (LocalCluster started for each of its blocks)
LOCAL_CLUSTER_BLOCKS = 3


def _blocks(reps, count):
    """``reps`` rounds cut into at most ``count`` blocks of sizes differing by at most one, largest first."""
    count = max(1, min(count, reps))
    return [reps // count + (1 if i < reps % count else 0) for i in range(count)]


def merge_blocks(blocks):
    """``measure_interleaved``'s results of several blocks as one: per scheduler, the fastest run of any block, the
    sampled run of highest peak, and the walls of every round in order."""
    runs, walls = {}, {}
    for block_runs, block_walls in blocks:
        for name, (best, peak) in block_runs.items():
            if name in runs:
                best = min(runs[name][0], best, key=lambda m: m.wall)
                peak = max(runs[name][1], peak, key=lambda m: m.peak)
            runs[name] = (best, peak)
        for name, w in block_walls.items():
            walls.setdefault(name, []).extend(w)
    return runs, walls
