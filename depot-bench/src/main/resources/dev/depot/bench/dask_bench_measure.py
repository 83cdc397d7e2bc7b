"""Measuring for `depot bench dask` (beside dask_bench.py): wall time, CPU seconds and peak memory of every
process involved, warm-ups, interleaved rounds of several schedulers, and the JSON line of each case."""

import json
import os
import sys
import threading
import time

from dask_bench_schedulers import settle

MIB = 1 << 20
#: a memory sample is not kept when a process's PSS fell by more than this while the others were read (pages it
#: held alone were mapped by another meanwhile); less than a shared array, more than the 8 MiB results that tasks
#: free as they go
PSS_UNSETTLED_DROP_BYTES = 64 * MIB


def procfs_module():
    """procfs.py, beside this script: imported where used."""
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
        return procfs_module().process_tree([os.getpid(), *self.extra])

    def _pss(self, pids):
        return sum(procfs_module().pss_bytes(p) for p in pids)

    def _settled_pss(self, pids):
        """The summed PSS of ``pids``, or None when pages changed hands while they were read. A read of every
        process takes milliseconds, and up to 0.2 s when they map a large object: a process read early still
        holds the whole PSS of pages that the processes read later map meanwhile, so the sum counts them up to
        twice (case (b): 1.33 copies in the first sample of the tasks, as the workers first touched the shared
        array, then 1.0). Each process is read again after the sum; when one has dropped by more than
        ``PSS_UNSETTLED_DROP_BYTES`` the sample is not kept."""
        pss = procfs_module().pss_bytes
        pids = list(pids)
        first = [pss(p) for p in pids]
        for p, before in zip(pids, first):
            if pss(p) < before - PSS_UNSETTLED_DROP_BYTES:
                return None
        return sum(first)

    def __enter__(self):
        cpu = procfs_module().cpu_seconds
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
        cpu = procfs_module().cpu_seconds
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
        cpu = procfs_module().cpu_seconds
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


#: case (a)'s warm-up, for every scheduler measured warm: this many computes of the same graph with the GIL work
#: cut to WARM_LOOPS (a fraction of a second each), then one of the real graph. A freshly started store daemon
#: is a JVM that has not compiled its request path yet: with one warm-up compute its JIT compiler threads took
#: ~50 ms of CPU per compute of the timed runs, competing with the two workers for the two cores; after ~20
#: computes it is ~5 ms (docs/DASK.md, "Figures"). A node's daemon serves many jobs: the warm one is its steady
#: state. The driver's ``--warm-computes`` sets it: other modules read it as ``dask_bench_measure.WARM_COMPUTES``.
WARM_COMPUTES = 20
WARM_LOOPS = 1000


def _warm_up(graph, scheduler, warm_graph):
    """``WARM_COMPUTES`` computes of ``warm_graph`` when given, then one of ``graph``."""
    import dask
    if warm_graph is not None:
        for _ in range(WARM_COMPUTES):
            dask.compute(warm_graph, scheduler=scheduler)
            settle(scheduler)
    dask.compute(graph, scheduler=scheduler)
    settle(scheduler)


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
            settle(scheduler)
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
        settle(scheduler)
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
