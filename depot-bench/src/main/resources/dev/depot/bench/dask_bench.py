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
"""

import contextlib
import importlib.util
import json
import os
import subprocess
import sys
import threading
import time
import types

import dask_bench_env

SKIPPED = 3  # exit status: this interpreter lacks Dask or NumPy
MIB = 1 << 20
#: a memory sample is not kept when a process's PSS fell by more than this while the others were read (pages it
#: held alone were mapped by another meanwhile); less than a shared array, more than the 8 MiB results that tasks
#: free as they go
PSS_UNSETTLED_DROP_BYTES = 64 * MIB
PART_LOCAL_CLUSTER = "local-cluster"
PART_DASK_ON_RAY = "dask-on-ray"
#: the child drivers of baselines are stopped after this long (``run_part``): Ray hung once after ``ray.init`` here
#: (2026-12-02), and in this process it would have hung the whole benchmark
DASK_ON_RAY_TIMEOUT_S = 300
LOCAL_CLUSTER_TIMEOUT_S = 600


# ---- measuring ------------------------------------------------------------------------------------------

def _procfs():
    import procfs  # beside this script
    return procfs


class Measure:
    """Wall time, CPU seconds of every process involved and, with ``sample``, the peak of their summed PSS (and
    the peak of each phase begun with ``phase``). Without ``sample`` and ``follow`` nothing runs during the
    measurement (for schedulers whose processes live through it: a look at the process tree every 50 ms costs
    CPU that two busy workers on two cores would miss)."""

    def __init__(self, extra_pids, sample=True, follow=True):
        self.extra = set(extra_pids)
        self.sample = sample
        self.follow = follow or sample
        self.phases = {}
        self._phase = None
        self._phase_number = 0
        #: samples not kept because pages changed hands while they were read (``_settled_pss``)
        self.unsettled = 0

    def _tree(self):
        return _procfs().process_tree([os.getpid(), *self.extra])

    def _pss(self, pids):
        return sum(_procfs().pss_bytes(p) for p in pids)

    def _settled_pss(self, pids):
        """The summed PSS of ``pids``, or None when pages changed hands while they were read. A read of every
        process takes milliseconds, and up to 0.2 s when they map a large object: a process read early still
        holds the whole PSS of pages that the processes read later map meanwhile, so the sum counts them up to
        twice (case (b): 1.33 copies in the first sample of the tasks, as the workers first touched the shared
        array, then 1.0). Each process is read again after the sum; when one has dropped by more than
        ``PSS_UNSETTLED_DROP_BYTES`` the sample is not kept."""
        pss = _procfs().pss_bytes
        pids = list(pids)
        first = [pss(p) for p in pids]
        for p, before in zip(pids, first):
            if pss(p) < before - PSS_UNSETTLED_DROP_BYTES:
                return None
        return sum(first)

    def __enter__(self):
        cpu = _procfs().cpu_seconds
        pids = self._tree()
        self.cpu0 = {p: cpu(p) for p in pids}
        self.cpu_last = dict(self.cpu0)
        self.base = self._pss(pids) if self.sample else 0
        self.peak = self.base
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True) if self.follow else None
        if self._thread is not None:
            self._thread.start()
        self.t0 = time.perf_counter()
        return self

    def phase(self, name):
        self.phases[name] = 0
        self._phase = name
        self._phase_number += 1

    def _sample(self):
        cpu = _procfs().cpu_seconds
        # without sampling, still follow the process tree now and then: processes that exit during the run
        # (Dask's process pool) keep the CPU they had at the last look
        while not self._stop.wait(0.02 if self.sample else 0.05):
            pids = self._tree()
            if self.sample:
                number = self._phase_number  # before the name: phase() sets the name first
                phase = self._phase
                now = self._settled_pss(pids)
                if now is None:
                    self.unsettled += 1
                else:
                    self.peak = max(self.peak, now)
                # a sample counts for a phase only if no phase began while its processes were read: a sample of
                # case (b)'s "share", read over 1.8 s while the caller writes the store's copy, would otherwise be
                # given to the "tasks" phase that follows
                if now is not None and phase is not None and number == self._phase_number:
                    self.phases[phase] = max(self.phases[phase], now)
            for p in pids:
                self.cpu_last[p] = cpu(p)

    def __exit__(self, *exc):
        self.wall = time.perf_counter() - self.t0
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        cpu = _procfs().cpu_seconds
        for p in self._tree():
            self.cpu_last[p] = cpu(p)
        self.cpu = sum(v - self.cpu0.get(p, 0.0) for p, v in self.cpu_last.items())

    def figures(self, prefix=""):
        out = {prefix + "wall_s": round(self.wall, 4), prefix + "cpu_s": round(self.cpu, 3)}
        if self.sample:
            out[prefix + "peak_pss_bytes"] = self.peak
            out[prefix + "peak_above_start_bytes"] = self.peak - self.base
        return out


def emit(case, figures, baseline, ratio, target, met):
    figures["load_average_1_5_15_min"] = "%.2f %.2f %.2f" % os.getloadavg()
    print(json.dumps({"case": case, "figures": figures, "baseline": baseline, "ratio": round(ratio, 3),
                      "target": target, "met": bool(met)}), flush=True)


def note(text):
    print("dask bench: " + text, file=sys.stderr, flush=True)


# ---- the graphs (module level, so process pools and Ray can pickle them by reference) --------------------

def gil_task(i, loops, n):
    import numpy as np
    acc = 0
    for k in range(loops):  # pure Python: holds the GIL
        acc = (acc * 31 + k) % 1000003
    return np.full(n, float(acc + i))


def combine(a, b):
    return a + b


def reduce_all(parts):
    return float(sum(p.sum() for p in parts))


def pipeline(tasks, loops, n):
    import dask
    level = [dask.delayed(gil_task, pure=True)(i, loops, n) for i in range(tasks)]
    while len(level) > 2:
        level = [dask.delayed(combine, pure=True)(level[i], level[i + 1]) for i in range(0, len(level), 2)]
    return dask.delayed(reduce_all, pure=True)(level)


def loops_for(seconds):
    """Loops of ``gil_task`` that take ``seconds`` of CPU, measured in CPU time of this thread: on a loaded machine
    wall time would count the time other processes had the core, and make the tasks shorter than asked."""
    gil_task(0, 1000, 1)  # imports NumPy, outside the measurement
    t = time.thread_time()
    gil_task(0, 200000, 1)
    per = (time.thread_time() - t) / 200000
    return max(1000, int(seconds / per))


def slice_sum(a, i, parts):
    return float(a[i::parts].sum())


def small(i):
    return bytes(1024)


def collect(xs):
    return len(xs)


def overhead_graph(n):
    import dask
    parts = [dask.delayed(small, pure=True)(i) for i in range(n)]
    return [dask.delayed(collect, pure=True)(parts[i:i + 100]) for i in range(0, n, 100)]


def heavy(i, n):
    import numpy as np
    rng = np.random.default_rng(i)
    x = rng.random(n)
    for _ in range(3):
        x = np.sqrt(np.sin(x) ** 2 + 1.0)
    return x


def cache_graph(parts, n):
    import dask
    return [dask.delayed(heavy, pure=True)(i, n) for i in range(parts)]


# ---- schedulers -----------------------------------------------------------------------------------------

class LocalClusterGet:
    """A LocalCluster's ``Client.get`` as a Dask scheduler, with ``settle``: wait until its scheduler has
    forgotten the last compute's tasks. It forgets them a moment after ``get`` returns (the release is
    asynchronous), and a compute of the same keys before then got the results it still held: probes here took 3 ms
    instead of 1.1 s."""

    def __init__(self, client):
        self._client = client

    def __call__(self, dsk, keys, **kwargs):
        return self._client.get(dsk, keys, **kwargs)

    def settle(self):
        deadline = time.monotonic() + LOCAL_CLUSTER_SETTLE_TIMEOUT_S
        while self._client.run_on_scheduler(_scheduler_task_count) and time.monotonic() < deadline:
            time.sleep(0.01)


LOCAL_CLUSTER_SETTLE_TIMEOUT_S = 30


def _scheduler_task_count(dask_scheduler):
    return len(dask_scheduler.tasks)


@contextlib.contextmanager
def local_cluster():
    import distributed
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    client = distributed.Client(cluster)
    try:
        yield LocalClusterGet(client)
    finally:
        client.close()
        cluster.close()


def _settle(scheduler):
    """Outside the timed runs, after each compute: a scheduler that keeps results for a moment forgets them."""
    if isinstance(scheduler, LocalClusterGet):
        scheduler.settle()


@contextlib.contextmanager
def dask_on_ray():
    import ray
    from ray.util.dask import ray_dask_get
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield ray_dask_get
    finally:
        ray.shutdown()


def run_part(python, directory, capacity, part, params, timeout):
    """The JSON object this script prints when run as a child driver (``--part part params``) under ``python``, or
    why there is none (a string: it failed, or it did not finish within ``timeout`` seconds and was killed with
    every process of its process group, the baseline's own included). A process group and not a session: the
    kernel's autogroup shares the CPU between sessions, and the child's figures must see the machine as this
    driver does."""
    import signal
    group = {"process_group": 0} if sys.version_info >= (3, 11) else {"preexec_fn": os.setpgrp}
    child = subprocess.Popen([python, os.path.abspath(__file__), directory, str(capacity), "--part", part,
                              json.dumps(params), "--warm-computes", str(WARM_COMPUTES)],
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


def _warm_up(graph, scheduler, warm_graph):
    """``WARM_COMPUTES`` computes of ``warm_graph`` when given, then one of ``graph``."""
    import dask
    if warm_graph is not None:
        for _ in range(WARM_COMPUTES):
            dask.compute(warm_graph, scheduler=scheduler)
            _settle(scheduler)
    dask.compute(graph, scheduler=scheduler)
    _settle(scheduler)


def measure(graph, scheduler, extra, reps, warm=True, peak_run=True, warm_graph=None):
    """``(best, peak)``: the unsampled run of least wall time out of ``reps`` (after a warm-up compute, and
    before it ``WARM_COMPUTES`` computes of ``warm_graph`` when given) and one more, sampled, run for the peak
    memory (the best run itself, sampled, without ``peak_run``)."""
    import dask
    if warm:
        _warm_up(graph, scheduler, warm_graph)
    best = None
    for _ in range(reps):
        with Measure(extra, sample=not peak_run) as m:
            dask.compute(graph, scheduler=scheduler)
        best = m if best is None or m.wall < best.wall else best
    if not peak_run:
        return best, best
    with Measure(extra) as peak:
        dask.compute(graph, scheduler=scheduler)
    return best, peak


def _gil_tasks(first, count, loops, n):
    for i in range(first, first + count):
        gil_task(i, loops, n)


def _gil_tasks_on(cpu, first, count, loops, n):
    """``_gil_tasks`` on CPU ``cpu`` only (None: wherever the kernel puts it); returns its wall seconds."""
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})
    t = time.perf_counter()
    _gil_tasks(first, count, loops, n)
    return time.perf_counter() - t


def _two_cpus():
    """Two CPUs this process may run on, or (None, None) when it may not choose (fewer than two, no affinity)."""
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None, None
    return (cpus[0], cpus[1]) if len(cpus) >= 2 else (None, None)


class TwoProcessCeiling:
    """The pipeline's leaf tasks with no scheduler at all: two plain processes (forked once, warmed up), each
    pinned to one of two CPUs and running half of them back to back, results thrown away. ``best`` (threads'
    wall over it: ``ceiling_speedup_vs_threads``) is what a static half-and-half split reaches.

    The two vCPUs of this VM are not always equal: at 00:14 UTC on 2026-12-02 one ran the GIL loop at 26 ms a task
    and the other at 47 ms. A static split then waits for the slow one, and a scheduler that hands tasks out as
    workers free up does better; the threaded scheduler runs its GIL holder on either. So each round also gives
    each vCPU's own time per task (``per_task``, seconds, of the round with the best ``limit``), and ``limit``:
    the wall of the leaves if both vCPUs ran them at those speeds all the time, split ideally
    (``tasks / (1/t0 + 1/t1)``). No scheduler on two processes beats ``limit`` in that round."""

    def __init__(self, tasks, loops, n):
        import multiprocessing
        self.tasks, self.loops, self.n = tasks, loops, n
        self._cpus = _two_cpus()
        # glibc keeps freed memory as in a depot.dask worker, so that both measure the leaves, not fresh pages
        self._pool = multiprocessing.get_context("fork").Pool(2, initializer=_keep_freed_memory)
        self._pool.starmap(_gil_tasks_on, [(self._cpus[0], 0, 2, loops, n), (self._cpus[1], 2, 2, loops, n)])
        self.best = None
        self.limit = None
        self.per_task = None

    def round(self):
        half = self.tasks // 2
        counts = (half, self.tasks - half)
        t = time.perf_counter()
        walls = self._pool.starmap(_gil_tasks_on, [(self._cpus[0], 0, counts[0], self.loops, self.n),
                                                   (self._cpus[1], half, counts[1], self.loops, self.n)])
        wall = time.perf_counter() - t
        self.best = wall if self.best is None else min(self.best, wall)
        per_task = [w / c for w, c in zip(walls, counts)]
        limit = self.tasks / sum(1 / p for p in per_task)
        if self.limit is None or limit < self.limit:
            self.limit, self.per_task = limit, per_task
        return "ceiling %.3f s (per task %s ms: limit %.3f s)" % (wall, " / ".join("%.1f" % (p * 1000) for p in per_task),
                                                                 limit)

    def figures(self, threads_wall, depot_speedup):
        """The ceiling's figures beside depot.dask's ``depot_speedup`` over ``threads_wall``."""
        ceiling = threads_wall / self.best
        limit = threads_wall / self.limit
        return {"ceiling_speedup_vs_threads": round(ceiling, 3),
                "fraction_of_ceiling": round(depot_speedup / ceiling, 3),
                "vcpu_ms_per_task": "%.1f / %.1f" % tuple(p * 1000 for p in self.per_task),
                "two_vcpu_limit_speedup_vs_threads": round(limit, 3),
                "fraction_of_two_vcpu_limit": round(depot_speedup / limit, 3)}

    def close(self):
        self._pool.terminate()
        self._pool.join()


def _keep_freed_memory():
    from depot.dask._worker import _keep_freed_memory as keep
    keep()


#: the static schedule's second process waits this long at most for the first one's half in the store
STATIC_HAND_OVER_TIMEOUT_S = 120
_static_client = None


def _static_init(directory):
    """A process of the static schedule: its own Depot client, and glibc told to keep freed memory as a depot.dask
    worker does (``_keep_freed_memory``: a first touch of a page costs ~10-17 us here, so a process that got fresh
    pages for every array would measure the VM, not the schedule)."""
    global _static_client
    import depot
    _keep_freed_memory()
    _static_client = depot.connect(directory)


def _static_half(first, count, loops, n, raw_id, hand_over):
    """Leaves ``first..first+count`` and their combines, depth first (as Dask orders them, so that few results are
    alive at once); then either stores the half's result under ``raw_id`` or waits for the other half there,
    combines and reduces."""
    from depot.ids import ObjectId
    stack = []  # (height, array): two of one height are combined at once
    for i in range(first, first + count):
        height, x = 0, gil_task(i, loops, n)
        while stack and stack[-1][0] == height:
            x = combine(stack.pop()[1], x)
            height += 1
        stack.append((height, x))
    mine = stack[0][1] if len(stack) == 1 else combine(*[x for _, x in stack[:2]])
    oid = ObjectId(raw_id)
    if hand_over:
        _static_client.put_object(oid, mine)
        return None
    other = _static_client.get_object(oid, timeout=STATIC_HAND_OVER_TIMEOUT_S)
    try:
        return reduce_all([mine, other])
    finally:
        del other
        _static_client.delete(oid)


class StaticSchedule:
    """Case (a)'s whole graph with no scheduler: two plain processes (forked once, warmed up, each with a Depot
    client) run half the leaves each and combine them in place; one hands its half over through Depot, the other
    makes the last combine and the reduction. One transfer and no messages at all: what a scheduler that knew the
    graph and the machine in advance would reach with equal vCPUs. The leaves-only ceiling (``TwoProcessCeiling``)
    leaves out the combines; this one does not, so the gap between it and depot.dask is the scheduling itself."""

    def __init__(self, directory, tasks, loops, n):
        import multiprocessing
        self.tasks, self.loops, self.n = tasks, loops, n
        context = multiprocessing.get_context("fork")
        # one pool per half, so that each half surely runs in its own process
        self._pools = [context.Pool(1, initializer=_static_init, initargs=(directory,)) for _ in range(2)]
        self._run(WARM_LOOPS)
        self.best = None
        #: the wall of each round, for ``median_of_rounds``
        self.walls = []

    def _run(self, loops):
        from depot.ids import ID_LENGTH
        raw_id = os.urandom(ID_LENGTH)
        half = self.tasks // 2
        futures = [self._pools[0].apply_async(_static_half, (0, half, loops, self.n, raw_id, True)),
                   self._pools[1].apply_async(_static_half, (half, self.tasks - half, loops, self.n, raw_id, False))]
        return [f.get(STATIC_HAND_OVER_TIMEOUT_S * 2) for f in futures]

    def round(self):
        t = time.perf_counter()
        self._run(self.loops)
        wall = time.perf_counter() - t
        self.best = wall if self.best is None else min(self.best, wall)
        self.walls.append(wall)
        return "static %.3f s" % wall

    def figures(self, threads_wall, depot_speedup):
        static = threads_wall / self.best
        return {"static_schedule_speedup_vs_threads": round(static, 3),
                "fraction_of_static_schedule": round(depot_speedup / static, 3)}

    def close(self):
        for pool in self._pools:
            pool.terminate()
            pool.join()


def measure_interleaved(graph, schedulers, extra, reps, warm_graph=None, references=(), first_round=0):
    """``({name: (best, peak)}, {name: [wall of each round]})`` for ``schedulers`` (name -> scheduler, whose
    processes live through a compute): each warmed up as ``measure`` does, then ``reps`` rounds of one unsampled
    run of each, in turn (so that a machine that speeds up or slows down during the case does so for all of
    them) and in the opposite order every other round (so that none always runs first after the references),
    with a round of each of ``references`` (``TwoProcessCeiling``, ``StaticSchedule``) in each, then a sampled
    run of each for the peak memory. ``first_round``: the number of rounds already run (for the order and the
    notes), when the rounds come in blocks."""
    import dask
    for scheduler in schedulers.values():
        _warm_up(graph, scheduler, warm_graph)
    best = {}
    walls = {name: [] for name in schedulers}
    for r in range(first_round, first_round + reps):
        order = list(schedulers.items())
        if r % 2:
            order.reverse()
        for name, scheduler in order:
            with Measure(extra, sample=False, follow=False) as m:
                dask.compute(graph, scheduler=scheduler)
            _settle(scheduler)
            if name not in best or m.wall < best[name].wall:
                best[name] = m
            walls[name].append(m.wall)
        shown = ["%s %.3f s" % (name, walls[name][-1]) for name in schedulers]
        for reference in references:
            shown.append(reference.round())
        note("round %d: %s" % (r + 1, ", ".join(shown)))  # how much the machine moved between rounds
    out = {}
    for name, scheduler in schedulers.items():
        with Measure(extra) as peak:
            dask.compute(graph, scheduler=scheduler)
        _settle(scheduler)
        out[name] = (best[name], peak)
    return out, walls


def median_of_rounds(baseline_walls, walls):
    """The median over rounds of ``baseline_walls[i] / walls[i]``: each round's two runs met the same machine, so
    their ratio moves less than the ratio of two best runs that may come from different rounds (``speedup_vs_*``,
    kept as the headline; both are reported)."""
    import statistics
    return round(statistics.median(b / w for b, w in zip(baseline_walls, walls)), 3)


def figures_of(name, best, peak):
    prefix = "" if name == "depot" else name + "_"
    out = best.figures(prefix)
    out[prefix + "peak_pss_bytes"] = peak.peak
    out[prefix + "peak_above_start_bytes"] = peak.peak - peak.base
    return out


# ---- the cases ------------------------------------------------------------------------------------------

def pipeline_size(quick):
    return (8, 1 * MIB // 8, 0.02) if quick else (32, 8 * MIB // 8, 0.05)


#: case (a)'s warm-up, for every scheduler measured warm: this many computes of the same graph with the GIL work
#: cut to WARM_LOOPS (a fraction of a second each), then one of the real graph. A freshly started store daemon
#: is a JVM that has not compiled its request path yet: with one warm-up compute its JIT compiler threads took
#: ~50 ms of CPU per compute of the timed runs, competing with the two workers for the two cores; after ~20
#: computes it is ~5 ms (docs/DASK.md, "Figures"). A node's daemon serves many jobs: the warm one is its steady
#: state.
WARM_COMPUTES = 20
WARM_LOOPS = 1000
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
    figures["warm_computes"] = 0 if quick else WARM_COMPUTES
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
    minor_faults = _procfs().minor_faults
    pids = s.workers
    faults = {p: minor_faults(p) for p in pids}
    published = s._pool.published_count
    dask.compute(g, scheduler=s)
    return {"worker_minor_faults_per_compute": sum(minor_faults(p) - faults[p] for p in pids),
            "results_published_per_compute": s._pool.published_count - published}


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


def dask_compute_small(scheduler):
    import dask
    dask.compute(overhead_graph(200), scheduler=scheduler)  # warm-up: workers started, functions shipped


CACHE_CHILD = r"""
import sys, time, dask, depot.dask
import numpy  # as the user's program has: not part of the timed compute
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
    quick = "--quick" in argv[2:]
    cases = argv[argv.index("--cases") + 1] if "--cases" in argv[2:] else "abcd"
    if "--warm-computes" in argv[2:]:
        global WARM_COMPUTES
        WARM_COMPUTES = int(argv[argv.index("--warm-computes") + 1])
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
