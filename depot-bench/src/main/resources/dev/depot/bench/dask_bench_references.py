"""The references `depot bench dask` measures depot.dask against on case (a) (beside dask_bench.py): the
pipeline's leaves with no scheduler at all (``TwoProcessCeiling``), and its whole graph on a static schedule
(``StaticSchedule``), each in two processes of its own."""

import os
import time

from dask_bench_measure import WARM_LOOPS
from dask_bench_graphs import combine, gil_task, reduce_all


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
