"""``depot bench dask-distributed``: same-node transfers through Depot against plain ``distributed.LocalCluster``,
measured in the same run.

Cases (each for both clusters, 2 worker processes, 1 thread each):

- transfer overhead of a float64 array of 1 MiB, 64 MiB and 512 MiB: a task on worker B that reads one element
  of an array made on worker A, minus the same task run on A (median of the repetitions);
- 2,000 results of 1 KiB made on A and consumed by one task on B (time per result);
- a pandas DataFrame shuffle (``ddf.shuffle("key")``: Depot's shuffle, the default on a Depot cluster,
  against Dask's task shuffle, ``shuffle="tasks"``), wall time and peak memory (the sum of the proportional set
  sizes of every process involved: the client, the workers, their nannies and the Depot daemon, sampled).

Prints one JSON object per case with ``--json`` (fields: name, case, figures, baseline, ratio, target, met:
the shape ``depot bench`` reads), else a table. ``--quick`` uses smaller sizes and fewer repetitions.

Run as ``python -m depot.dask.distributed.bench [--quick] [--json] [--dir DIR]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import threading
import time
import uuid

import distributed
import numpy as np

from ..._procfs import process_tree, pss_bytes
from .cluster import LocalCluster

MIB = 1 << 20


def _first(a):
    return float(a.reshape(-1)[-1])


def _make(n):
    return np.full(n, 1.0)


def _small(i):
    return bytes(1023) + bytes([i % 256])


def _count(*parts):
    return sum(len(p) for p in parts)


class PssSampler:
    """Samples the summed PSS of a set of processes (and their children) every ``interval`` seconds."""

    def __init__(self, pids, interval=0.1):
        self.roots = list(pids)
        self.interval = interval
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def sample(self):
        total = sum(pss_bytes(p) for p in process_tree(self.roots))
        self.peak = max(self.peak, total)
        return total

    def _run(self):
        while not self._stop.wait(self.interval):
            self.sample()

    def __enter__(self):
        self.peak = 0
        self.sample()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._stop.clear()
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.sample()


def _workers(client):
    return sorted(client.scheduler_info()["workers"])


_UNMEASURABLE_SECONDS = 1e-6


def transfer_overhead(client, elements, reps):
    """Median seconds of reading a fresh array made on A from B, minus reading it on A."""
    a, b = _workers(client)
    cross, local = [], []
    for _ in range(reps):
        for target, out in ((b, cross), (a, local)):
            x = client.submit(_make, elements, workers=[a], pure=False)
            distributed.wait(x)
            start = time.perf_counter()
            client.submit(_first, x, workers=[target], pure=False).result()
            out.append(time.perf_counter() - start)
            del x
    return max(0.0, statistics.median(cross) - statistics.median(local))


def small_results(client, count):
    """Seconds per result for ``count`` 1 KiB results made on A and consumed by one task on B."""
    a, b = _workers(client)
    parts = client.map(_small, range(count), workers=[a], pure=False)
    distributed.wait(parts)
    start = time.perf_counter()
    client.submit(_count, *parts, workers=[b], pure=False).result()
    return (time.perf_counter() - start) / count


def dataframe_shuffle(client, nbytes, pids, method):
    """Wall seconds and peak PSS of shuffling a DataFrame of about ``nbytes`` on the cluster with the shuffle
    ``method`` (None: the cluster's default, "depot" on a Depot cluster)."""
    import dask
    import dask.dataframe as dd
    import pandas as pd

    import depot.dask.dataframe  # noqa: F401  (the "depot" shuffle, the default on a depot:// cluster)
    rows = nbytes // 16
    parts = 16

    def make(i):
        n = rows // parts
        rng = np.random.default_rng(i)
        return pd.DataFrame({"key": rng.integers(0, 1 << 30, n), "value": rng.random(n)})

    meta = make(0).iloc[:0]
    if hasattr(dd, "from_map"):  # one blockwise layer: Dask fuses it with the tasks that consume it
        ddf = dd.from_map(make, range(parts), meta=meta)
    else:
        ddf = dd.from_delayed([dask.delayed(make)(i) for i in range(parts)], meta=meta)
    with PssSampler(pids) as sampler:
        start = time.perf_counter()
        out = ddf.shuffle("key", shuffle=method)
        total = client.compute(out.value.sum()).result()
        seconds = time.perf_counter() - start
    assert np.isfinite(total)
    return seconds, sampler.peak


def _pids(cluster, client):
    pids = [os.getpid()]
    pids += list(client.run(os.getpid).values())
    daemon = getattr(cluster, "depot_daemon", None)
    if daemon is not None:
        pids.append(daemon.pid)
    return pids


def run(quick, store_dir, frame_mib=None, shuffle_only=False):
    sizes = [] if shuffle_only else [1 * MIB] if quick else [1 * MIB, 64 * MIB, 512 * MIB]
    reps = 1 if quick else 5
    results_count = 100 if quick else 2000
    frame_bytes = (frame_mib or (8 if quick else 2048)) * MIB
    capacity = max((1 << 30) if quick else (6 << 30), 3 * frame_bytes)  # the frame, its index, the partitions
    results = {}
    plain = dict(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    clusters = (
        ("depot", None, lambda: LocalCluster(depot_dir=store_dir, depot_capacity=capacity, **plain)),
        ("baseline", "tasks", lambda: distributed.LocalCluster(**plain)),
    )
    for label, method, make in clusters:
        with make() as cluster, distributed.Client(cluster) as client:
            for size in sizes:
                target = 20.0 if size >= 64 * MIB else None
                results.setdefault(("transfer %d MiB" % (size // MIB), "s", target), {})[label] = \
                    transfer_overhead(client, size // 8, reps)
            if not shuffle_only:
                results.setdefault(("%d 1 KiB results" % results_count, "s/result", None), {})[label] = \
                    small_results(client, results_count)
            seconds, peak = dataframe_shuffle(client, frame_bytes, _pids(cluster, client), method)
            name = "shuffle %d MiB DataFrame" % (frame_bytes // MIB)
            results.setdefault((name, "s", 1.5), {})[label] = seconds
            results.setdefault((name + " peak PSS", "bytes", 1 / 0.6), {})[label] = peak
    rows = []
    for (case, unit, target), figures in results.items():
        depot_value, base = figures["depot"], figures["baseline"]
        # An overhead too small to measure (cross-worker no slower than same-worker, within the noise) counts as
        # the timer's microsecond: the ratio is then a lower bound, never a missing figure.
        ratio = base / max(depot_value, _UNMEASURABLE_SECONDS) if unit.startswith("s") else base / depot_value
        rows.append({"name": "dask-distributed", "case": case,
                     "figures": {"value": depot_value, "unit": unit},
                     "baseline": {"kind": "plain distributed.LocalCluster (TCP)", "value": base, "unit": unit},
                     "ratio": ratio,
                     "target": "" if target is None else ">= %.3gx lower than the baseline" % target,
                     "met": target is not None and ratio is not None and ratio >= target})
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(prog="depot bench dask-distributed", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="smaller sizes, fewer repetitions")
    p.add_argument("--json", action="store_true", help="one JSON object per case")
    p.add_argument("--dir", help="store directory (default: a fresh one under /dev/shm, removed afterwards)")
    p.add_argument("--frame-mib", type=int, help="size of the shuffled DataFrame in MiB (default 2048; 8 quick)")
    p.add_argument("--shuffle-only", action="store_true", help="only the DataFrame shuffle case")
    args = p.parse_args(argv)
    store_dir = args.dir or os.path.join("/dev/shm", "depot-bench-" + uuid.uuid4().hex[:12])
    try:
        rows = run(args.quick, store_dir, args.frame_mib, args.shuffle_only)
    finally:
        if args.dir is None:
            shutil.rmtree(store_dir, ignore_errors=True)
    for r in rows:
        if args.json:
            print(json.dumps(r))
        else:
            ratio = "-" if r["ratio"] is None else "%.2fx" % r["ratio"]
            target = r["target"] and "%s: %s" % (r["target"], "met" if r["met"] else "MISSED")
            print("%-34s depot %12.6g  baseline %12.6g %-8s  ratio %8s  %s"
                  % (r["case"], r["figures"]["value"], r["baseline"]["value"], r["figures"]["unit"], ratio, target))
    return 0


if __name__ == "__main__":
    sys.exit(main())
