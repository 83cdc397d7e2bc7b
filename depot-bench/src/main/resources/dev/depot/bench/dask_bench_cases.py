"""The cases of `depot bench dask` (beside dask_bench.py, whose docstring describes them): each measures
depot.dask and its baselines and prints one JSON line (``emit``)."""

import os
import subprocess
import sys

import dask_bench_measure
from dask_bench_graphs import loops_for, overhead_graph, pipeline, slice_sum
from dask_bench_measure import (MIB, WARM_LOOPS, Measure, emit, figures_of, measure, measure_interleaved,
                                median_of_rounds, note)
from dask_bench_parts import dask_on_ray_part, local_cluster_part
from dask_bench_references import StaticSchedule, TwoProcessCeiling


def pipeline_size(quick):
    return (8, 1 * MIB // 8, 0.02) if quick else (32, 8 * MIB // 8, 0.05)


#: case (a): rounds of one depot.dask and one threaded run each, in turn (``measure_interleaved``); the fastest of
#: each counts, and the median of the rounds' ratios is reported beside it
PIPELINE_ROUNDS = 7


def case_pipeline(s, extra, quick, directory, capacity):
    tasks, n, seconds = pipeline_size(quick)
    loops = loops_for(seconds)
    g = pipeline(tasks, loops, n)
    reps = 1 if quick else PIPELINE_ROUNDS
    warm = None if quick else pipeline(tasks, WARM_LOOPS, n)
    if quick:
        runs = {"depot": measure(g, s, extra, 2, peak_run=False),
                "threads": measure(g, "threads", extra, 1, warm=False, peak_run=False)}
    else:
        ceiling = TwoProcessCeiling(tasks, loops, n)
        static = StaticSchedule(directory, tasks, loops, n)
        try:
            runs, walls = measure_interleaved(g, {"depot": s, "threads": "threads"}, extra, reps, warm_graph=warm,
                                              references=(ceiling, static))
        finally:
            ceiling.close()
            static.close()
    placement = depot_placement(g, s)
    # Dask's process scheduler starts a new pool for every compute, so a warm-up would not warm it; one run (it
    # takes tens of seconds at this size)
    runs["processes"] = measure(g, "processes", extra, 1, warm=False, peak_run=not quick)
    missing = {}
    ray = None
    if not quick:
        ray = dask_on_ray_part(directory, capacity, {"graph": "pipeline", "tasks": tasks, "loops": loops, "n": n})
        if isinstance(ray, str):
            missing["dask_on_ray"], ray = ray, None
    figures = figures_of("depot", *runs["depot"])
    figures.update(placement)
    figures["python"] = interpreter_description()
    figures["warm_computes"] = 0 if quick else dask_bench_measure.WARM_COMPUTES
    baseline = {}
    for name, (best, peak) in runs.items():
        if name != "depot":
            baseline.update(figures_of(name, best, peak))
            figures["speedup_vs_" + name] = round(best.wall / runs["depot"][0].wall, 3)
    if ray is not None:
        baseline.update(ray)
        figures["speedup_vs_dask_on_ray"] = round(ray["dask_on_ray_wall_s"] / runs["depot"][0].wall, 3)
    if not quick:
        baseline["two_process_ceiling_wall_s"] = round(ceiling.best, 4)
        baseline["two_vcpu_limit_wall_s"] = round(ceiling.limit, 4)
        baseline["static_schedule_wall_s"] = round(static.best, 4)
        figures.update(ceiling.figures(runs["threads"][0].wall, figures["speedup_vs_threads"]))
        figures.update(static.figures(runs["threads"][0].wall, figures["speedup_vs_threads"]))
        figures["speedup_vs_threads_median_of_rounds"] = median_of_rounds(walls["threads"], walls["depot"])
        figures["static_schedule_speedup_vs_threads_median_of_rounds"] = median_of_rounds(walls["threads"],
                                                                                          static.walls)
    met = figures["speedup_vs_threads"] >= 1.9 and figures["speedup_vs_processes"] >= 2.0
    if not quick:
        lc = local_cluster_part(directory, capacity, tasks, loops, n, reps)
        if isinstance(lc, str):
            missing["local_cluster"] = lc
        else:
            # measured under another interpreter: the ratio is against depot.dask under that interpreter
            baseline.update({k: v for k, v in lc.items() if k.startswith("local_cluster_")})
            for k in ("depot_wall_s", "depot_cpu_s", "threads_wall_s", "two_process_ceiling_wall_s"):
                figures["local_cluster_python_" + k] = lc[k]
            figures["local_cluster_python_ceiling_speedup_vs_threads"] = round(
                lc["threads_wall_s"] / lc["two_process_ceiling_wall_s"], 3)
            figures["local_cluster_python_two_vcpu_limit_speedup_vs_threads"] = round(
                lc["threads_wall_s"] / lc["two_vcpu_limit_wall_s"], 3)
            figures["local_cluster_python_static_schedule_speedup_vs_threads"] = round(
                lc["threads_wall_s"] / lc["static_schedule_wall_s"], 3)
            figures["speedup_vs_local_cluster"] = round(lc["local_cluster_wall_s"] / lc["depot_wall_s"], 3)
            # The most any scheduler on two processes could have had over LocalCluster's fastest compute in this
            # run: the leaf tasks alone, split ideally over the two vCPUs at their measured speeds, take the limit.
            reachable = lc["local_cluster_wall_s"] / lc["two_vcpu_limit_wall_s"]
            figures["local_cluster_reachable_speedup"] = round(reachable, 3)
            if reachable < 1.5:
                note("LocalCluster's fastest compute was %.2fx the two-vCPU limit in this run: no scheduler could "
                     "have been 1.5x faster" % reachable)
            figures["speedup_vs_local_cluster_median_of_rounds"] = lc["local_cluster_speedup_median_of_rounds"]
            figures["local_cluster_python_speedup_vs_threads_median_of_rounds"] = lc["threads_speedup_median_of_rounds"]
            figures["local_cluster_python_speedup_vs_threads"] = round(lc["threads_wall_s"] / lc["depot_wall_s"], 3)
            note("LocalCluster measured under %s, beside depot.dask under the same interpreter"
                 % lc["local_cluster_python"])
        if ray is not None:
            met = met and figures["speedup_vs_dask_on_ray"] >= 1.0
        if "speedup_vs_local_cluster" in figures:
            met = met and figures["speedup_vs_local_cluster"] >= 1.5
        met = met and not missing
    for name, why in missing.items():
        baseline[name] = why
        note("no %s baseline: %s" % (name, why))
    emit("a: pipeline %d GIL tasks x %d MiB" % (tasks, n * 8 // MIB), figures, baseline,
         figures["speedup_vs_threads"], ">= 1.9x threads, >= 2x processes, >= 1.5x LocalCluster, >= dask-on-ray",
         met)


def depot_placement(g, s):
    """One more compute of ``g`` on depot.dask: the workers' minor page faults (a first touch of a page costs
    ~10-17 us of CPU on this VM) and how many results crossed between processes (published into the store)."""
    import dask
    minor_faults = dask_bench_measure.procfs_module().minor_faults
    pids = s.workers
    faults = {p: minor_faults(p) for p in pids}
    published = s._pool.published_count
    dask.compute(g, scheduler=s)
    return {"worker_minor_faults_per_compute": sum(minor_faults(p) - faults[p] for p in pids),
            "results_published_per_compute": s._pool.published_count - published}


def case_broadcast(s, extra, quick):
    """Phases, measured from before the array exists: "make" (the caller's private array), "share" (one copy into
    the store; the private original is dropped after) and "tasks" (16 tasks reading it). The process
    scheduler gets the array as one key of the graph (``dask.delayed(array)``, so it is pickled per task sent,
    not embedded in every task)."""
    import dask
    import numpy as np
    import depot.dask
    nbytes = (16 if quick else 1024) * MIB
    with Measure(extra) as depot_m:
        depot_m.phase("make")
        array = np.arange(nbytes // 8, dtype=np.float64)
        depot_m.phase("share")
        shared = depot.dask.share(array, dir=s.directory)
        del array
        depot_m.phase("tasks")
        with shared:
            tasks = [dask.delayed(slice_sum)(shared, i, 16) for i in range(16)]
            dask.compute(*tasks, scheduler=s)
            del tasks
    if depot_m.unsettled:
        note("broadcast: %d memory samples not kept (pages changed hands while they were read)" % depot_m.unsettled)
    figures = depot_m.figures()
    figures["array_bytes"] = nbytes
    # a phase shorter than the sampling interval may have no sample: the whole run's peak stands in for it
    overall = round((depot_m.peak - depot_m.base) / nbytes, 3)
    per_copy = {k: round((v - depot_m.base) / nbytes, 3) if v else overall for k, v in depot_m.phases.items()}
    figures["peak_above_start_per_copy"] = overall
    figures["tasks_peak_above_start_per_copy"] = per_copy["tasks"]
    figures["share_peak_above_start_per_copy"] = per_copy["share"]
    # Dask's process scheduler pickles the array into every task it submits, and submits all 16 at once: about
    # 34 copies at the peak. Where that does not fit (1 GiB needs ~34 GiB) it gets the largest power-of-two
    # size that does, and the ratio is per copy.
    proc_bytes = nbytes
    available = _mem_available()
    while available is not None and proc_bytes > 16 * MIB and 40 * proc_bytes > available // 2:
        proc_bytes //= 2
    with Measure(extra) as proc_m:
        proc_m.phase("make")
        array = np.arange(proc_bytes // 8, dtype=np.float64)
        proc_m.phase("tasks")
        one = dask.delayed(array, name="broadcast-array")
        tasks = [dask.delayed(slice_sum)(one, i, 16) for i in range(16)]
        dask.compute(*tasks, scheduler="processes", num_workers=2)
        del array, one, tasks
    baseline = proc_m.figures("processes_")
    baseline["processes_array_bytes"] = proc_bytes
    baseline["processes_peak_above_start_per_copy"] = round((proc_m.peak - proc_m.base) / proc_bytes, 3)
    proc_per_copy = ((proc_m.phases["tasks"] or proc_m.peak) - proc_m.base) / proc_bytes
    baseline["processes_tasks_peak_above_start_per_copy"] = round(proc_per_copy, 3)
    if proc_bytes != nbytes:
        note("broadcast: the process scheduler got a %d MiB array (%d MiB available; it needs ~34 copies)"
             % (proc_bytes // MIB, available // MIB))
    ratio = proc_per_copy / max(1e-9, per_copy["tasks"])
    emit("b: broadcast %d MiB to 16 tasks" % (nbytes // MIB), figures, baseline, ratio,
         "while the tasks run: <= 1.3 copies above start and >= 3x less than processes (sharing itself briefly "
         "holds the private original and the store's copy)", ratio >= 3.0 and per_copy["tasks"] <= 1.3)


def case_overhead(s, extra, quick, directory, capacity):
    n = 2000 if quick else 10000
    g = overhead_graph(n)
    depot_best, depot_peak = measure(g, s, extra, 2, peak_run=not quick)
    proc_best, proc_peak = measure(g, "processes", extra, 1, warm=False, peak_run=not quick)
    figures = {"tasks": n, "per_task_us": round(depot_best.wall / n * 1e6, 2)}
    figures.update(figures_of("depot", depot_best, depot_peak))
    baseline = {"processes_per_task_us": round(proc_best.wall / n * 1e6, 2)}
    baseline.update(figures_of("processes", proc_best, proc_peak))
    met = depot_best.wall <= 1.2 * proc_best.wall
    if not quick:
        ray = dask_on_ray_part(directory, capacity, {"graph": "overhead", "n": n})
        if isinstance(ray, str):
            baseline["dask_on_ray"] = ray
            met = False
        else:
            baseline["dask_on_ray_per_task_us"] = round(ray["dask_on_ray_wall_s"] / n * 1e6, 2)
            baseline.update(ray)
            met = met and depot_best.wall < ray["dask_on_ray_wall_s"]
    emit("c: overhead %d tasks, 1 KiB results" % n, figures, baseline, proc_best.wall / depot_best.wall,
         "per task <= 1.2x the process scheduler's, below dask-on-ray's", met)


CACHE_CHILD = r"""
import sys, time, dask, depot.dask
import numpy  # as the user's program has: not part of the timed compute
sys.path.insert(0, sys.argv[1])
import dask_bench_graphs
g = dask_bench_graphs.cache_graph(int(sys.argv[3]), int(sys.argv[4]))
with depot.dask.Cache(int(sys.argv[5]), dir=sys.argv[2], namespace="bench") as c:
    t = time.perf_counter()
    dask.compute(*g, scheduler="threads")
    print("%f %d" % (time.perf_counter() - t, c.hits), flush=True)
"""


def case_cache(s, quick):
    parts, n = (8, 4 * MIB // 8) if quick else (16, 64 * MIB // 8)
    here = os.path.dirname(os.path.abspath(__file__))
    runs = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", CACHE_CHILD, here, s.directory, str(parts), str(n),
                              str(parts * n * 8 + 64 * MIB)], env=dict(os.environ), capture_output=True, text=True,
                             timeout=600)
        if out.returncode != 0:
            raise RuntimeError("cache child failed: %s" % out.stderr[-2000:])
        wall, hits = out.stdout.split()
        runs.append((float(wall), int(hits)))
    import depot.cache
    depot.cache.SharedCache(1, dir=s.directory, namespace="bench").clear()
    ratio = runs[0][0] / runs[1][0]
    emit("d: cache, %d MiB of results, second process" % (parts * n * 8 // MIB),
         {"second_wall_s": round(runs[1][0], 4), "second_hits": runs[1][1]},
         {"first_wall_s": round(runs[0][0], 4)}, ratio, ">= 10x faster than the first computation", ratio >= 10)


def _mem_available():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def interpreter_description():
    """This interpreter, the build it runs on (a virtual environment's ``python`` links to it) and Dask's
    version: the figures depend on all three."""
    import platform
    return "%s (%s %s, %s; dask %s)" % (sys.executable, platform.python_implementation(), platform.python_version(),
                                      os.path.realpath(sys.executable), _dask_version())


def _dask_version():
    import dask
    return dask.__version__
