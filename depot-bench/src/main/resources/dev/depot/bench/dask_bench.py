"""`depot bench dask`: depot.dask beside Dask's own schedulers (and dask-on-ray, LocalCluster where installed),
all measured in this run. Prints one JSON object per case:
{"case", "figures", "baseline", "ratio", "target", "met"}.

    python3 dask_bench.py STORE_DIR CAPACITY [--quick]      (it starts the store's daemon itself)

Cases: (a) the user's pipeline (GIL-holding tasks making 8 MiB arrays, pairwise combines, a reduction);
(b) broadcast of one large array to 16 tasks with share(), peak memory; (c) per-task overhead of 10,000 tasks
with 1 KiB results; (d) a second process computing the same graph through depot.dask.Cache.
Wall time, CPU seconds and peak memory (sum of the PSS of every process involved: this one, its descendants and
the store's daemon, sampled every 20 ms).
"""

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
import types

from depot._procfs import cpu_seconds, process_tree, pss_bytes

SKIPPED = 3  # exit status: this interpreter lacks Dask or NumPy

try:
    import dask
    import numpy as np
except ImportError as e:
    if __name__ == "__main__":
        print("dask bench: skipped: %s (%s); set DEPOT_BENCH_PYTHON to an interpreter with dask and numpy"
              % (e, sys.executable), file=sys.stderr)
        sys.exit(SKIPPED)
    raise

MIB = 1 << 20


# ---- measuring ------------------------------------------------------------------------------------------

def _tree(root, extra):
    return process_tree([root, *extra])


class Measure:
    """Wall time, CPU seconds of every process involved, peak of their summed PSS."""

    def __init__(self, extra_pids):
        self.extra = set(extra_pids)

    def __enter__(self):
        self.cpu0 = {p: cpu_seconds(p) for p in _tree(os.getpid(), self.extra)}
        self.base = sum(pss_bytes(p) for p in _tree(os.getpid(), self.extra))
        self.peak = self.base
        self.cpu_last = dict(self.cpu0)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        self.t0 = time.perf_counter()
        return self

    def _sample(self):
        while not self._stop.wait(0.02):
            pids = _tree(os.getpid(), self.extra)
            self.peak = max(self.peak, sum(pss_bytes(p) for p in pids))
            for p in pids:
                self.cpu_last[p] = cpu_seconds(p)

    def __exit__(self, *exc):
        self.wall = time.perf_counter() - self.t0
        self._stop.set()
        self._thread.join()
        for p in _tree(os.getpid(), self.extra):
            self.cpu_last[p] = cpu_seconds(p)
        self.cpu = sum(v - self.cpu0.get(p, 0.0) for p, v in self.cpu_last.items())

    def figures(self, prefix=""):
        return {prefix + "wall_s": round(self.wall, 4), prefix + "cpu_s": round(self.cpu, 3),
                prefix + "peak_pss_bytes": self.peak, prefix + "peak_above_start_bytes": self.peak - self.base}


def emit(case, figures, baseline, ratio, target, met):
    print(json.dumps({"case": case, "figures": figures, "baseline": baseline, "ratio": round(ratio, 3),
                      "target": target, "met": bool(met)}), flush=True)


# ---- the graphs (module level, so process pools and Ray can pickle them by reference) --------------------

def gil_task(i, loops, n):
    acc = 0
    for k in range(loops):  # pure Python: holds the GIL
        acc = (acc * 31 + k) % 1000003
    return np.full(n, float(acc + i))


def combine(a, b):
    return a + b


def reduce_all(parts):
    return float(sum(p.sum() for p in parts))


def pipeline(tasks, loops, n):
    level = [dask.delayed(gil_task, pure=True)(i, loops, n) for i in range(tasks)]
    while len(level) > 2:
        level = [dask.delayed(combine, pure=True)(level[i], level[i + 1]) for i in range(0, len(level), 2)]
    return dask.delayed(reduce_all, pure=True)(level)


def loops_for(seconds):
    t = time.perf_counter()
    gil_task(0, 200000, 1)
    per = (time.perf_counter() - t) / 200000
    return max(1000, int(seconds / per))


def slice_sum(a, i, parts):
    return float(a[i::parts].sum())


def small(i):
    return bytes(1024)


def collect(xs):
    return len(xs)


def overhead_graph(n):
    parts = [dask.delayed(small, pure=True)(i) for i in range(n)]
    return [dask.delayed(collect, pure=True)(parts[i:i + 100]) for i in range(0, n, 100)]


def heavy(i, n):
    rng = np.random.default_rng(i)
    x = rng.random(n)
    for _ in range(3):
        x = np.sqrt(np.sin(x) ** 2 + 1.0)
    return x


def cache_graph(parts, n):
    return [dask.delayed(heavy, pure=True)(i, n) for i in range(parts)]


# ---- the cases ------------------------------------------------------------------------------------------

def optional_baselines(quick):
    """(name, scheduler, closer) for LocalCluster and dask-on-ray where installed (not in --quick)."""
    out = []
    if quick:
        return out
    try:
        import distributed
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
        client = distributed.Client(cluster)
        out.append(("local_cluster", client.get, lambda: (client.close(), cluster.close())))
    except Exception as e:  # not installed or cannot start: reported, not fatal
        print("dask bench: no LocalCluster baseline: %s" % e, file=sys.stderr)
    try:
        import ray
        from ray.util.dask import ray_dask_get
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        out.append(("dask_on_ray", ray_dask_get, ray.shutdown))
    except Exception as e:
        print("dask bench: no dask-on-ray baseline: %s" % e, file=sys.stderr)
    return out


def timed(extra, graph, scheduler, reps=1):
    best = None
    for _ in range(reps):
        with Measure(extra) as m:
            dask.compute(graph, scheduler=scheduler)
        best = m if best is None or m.wall < best.wall else best
    return best


def case_pipeline(s, extra, quick, others):
    tasks, n = (8, 1 * MIB // 8) if quick else (32, 8 * MIB // 8)
    loops = loops_for(0.02 if quick else 0.05)
    g = pipeline(tasks, loops, n)
    dask.compute(g, scheduler=s)  # warm the workers
    depot_m = timed(extra, g, s, 2)
    base = {"threads": timed(extra, g, "threads"), "processes": timed(extra, g, "processes")}
    for name, sched, _ in others:
        dask.compute(g, scheduler=sched)
        base[name] = timed(extra, g, sched)
    figures = depot_m.figures()
    baseline = {}
    for name, m in base.items():
        baseline.update(m.figures(name + "_"))
        figures["speedup_vs_" + name] = round(m.wall / depot_m.wall, 3)
    met = figures["speedup_vs_threads"] >= 1.9 and figures["speedup_vs_processes"] >= 2.0
    if "local_cluster" in base:
        met = met and figures["speedup_vs_local_cluster"] >= 1.5
    if "dask_on_ray" in base:
        met = met and figures["speedup_vs_dask_on_ray"] >= 1.0
    emit("a: pipeline %d GIL tasks x %d MiB" % (tasks, n * 8 // MIB), figures, baseline,
         figures["speedup_vs_threads"], ">= 1.9x threads, >= 2x processes, >= 1.5x LocalCluster, >= dask-on-ray",
         met)


def case_broadcast(s, extra, quick):
    """Measured from before the array exists: making it, sharing it (one copy into the store; the private
    original is dropped) and 16 tasks reading it, against the same 16 tasks under the process scheduler."""
    import depot.dask
    nbytes = (16 if quick else 1024) * MIB
    with Measure(extra) as depot_m:
        array = np.arange(nbytes // 8, dtype=np.float64)
        with depot.dask.share(array, dir=s.directory) as shared:
            del array
            tasks = [dask.delayed(slice_sum)(shared, i, 16) for i in range(16)]
            dask.compute(*tasks, scheduler=s)
            del tasks
    with Measure(extra) as proc_m:
        array = np.arange(nbytes // 8, dtype=np.float64)
        tasks = [dask.delayed(slice_sum)(array, i, 16) for i in range(16)]
        dask.compute(*tasks, scheduler="processes", num_workers=2)
        del array, tasks
    figures = depot_m.figures()
    figures["array_bytes"] = nbytes
    figures["peak_above_start_per_copy"] = round((depot_m.peak - depot_m.base) / nbytes, 3)
    baseline = proc_m.figures("processes_")
    baseline["processes_peak_above_start_per_copy"] = round((proc_m.peak - proc_m.base) / nbytes, 3)
    ratio = (proc_m.peak - proc_m.base) / max(1, depot_m.peak - depot_m.base)
    emit("b: broadcast %d MiB to 16 tasks" % (nbytes // MIB), figures, baseline, ratio,
         ">= 3x less peak memory than processes (one copy in the store; the private original while it is put)",
         ratio >= 3.0)


def case_overhead(s, extra, quick, others):
    n = 2000 if quick else 10000
    g = overhead_graph(n)
    dask.compute(g, scheduler=s)
    depot_m = timed(extra, g, s)
    proc_m = timed(extra, g, "processes")
    figures = {"tasks": n, "per_task_us": round(depot_m.wall / n * 1e6, 2)}
    figures.update(depot_m.figures())
    baseline = {"processes_per_task_us": round(proc_m.wall / n * 1e6, 2)}
    met = depot_m.wall <= 1.2 * proc_m.wall
    for name, sched, _ in others:
        if name == "dask_on_ray":
            m = timed(extra, g, sched)
            baseline["dask_on_ray_per_task_us"] = round(m.wall / n * 1e6, 2)
            met = met and depot_m.wall < m.wall
    emit("c: overhead %d tasks, 1 KiB results" % n, figures, baseline, proc_m.wall / depot_m.wall,
         "per task <= 1.2x the process scheduler's, below dask-on-ray's", met)


CACHE_CHILD = r"""
import sys, time, dask, depot.dask
sys.path.insert(0, sys.argv[1])
import dask_bench
g = dask_bench.cache_graph(int(sys.argv[3]), int(sys.argv[4]))
with depot.dask.Cache(int(sys.argv[5]), dir=sys.argv[2], namespace="bench") as c:
    t = time.perf_counter()
    dask.compute(*g, scheduler="threads")
    print("%f %d" % (time.perf_counter() - t, c.hits), flush=True)
"""


def case_cache(s, quick):
    parts, n = (8, 4 * MIB // 8) if quick else (16, 64 * MIB // 8)
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ)
    runs = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", CACHE_CHILD, here, s.directory, str(parts), str(n),
                              str(parts * n * 8 + 64 * MIB)], env=env, capture_output=True, text=True,
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


def main():
    directory, capacity = sys.argv[1], sys.argv[2]
    quick = "--quick" in sys.argv[3:]
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
        others = optional_baselines(quick)
        try:
            with depot.dask.Scheduler(workers=2, dir=directory) as s:
                case_pipeline(s, [daemon.pid], quick, others)
                case_broadcast(s, [daemon.pid], quick)
                case_overhead(s, [daemon.pid], quick, others)
                case_cache(s, quick)
        finally:
            for _, _, close in others:
                try:
                    close()
                except Exception:
                    pass


if __name__ == "__main__":
    main()
