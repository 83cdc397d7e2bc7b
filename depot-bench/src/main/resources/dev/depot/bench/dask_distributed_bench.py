"""``depot bench dask-distributed``: same-node transfers through Depot against plain ``distributed.LocalCluster``,
measured in the same run.

Cases (each for both clusters, 2 worker processes, 1 thread each):

- transfer overhead of a float64 array of 1 MiB, 64 MiB and 512 MiB: a task on worker B that reads one element
  of an array made on worker A, minus the same task run on A (median of the repetitions);
- 2,000 results of 1 KiB made on A and consumed by one task on B (time per result);
- a pandas DataFrame shuffle (``ddf.shuffle("key")``: Depot's shuffle, the default on a Depot cluster,
  against Dask's task shuffle, ``shuffle="tasks"``), wall time and two peaks sampled every 100 ms over the
  same processes (the client, the workers, their nannies and the Depot daemon): *peak PSS*, the sum of their
  proportional set sizes (a store page counts once it is mapped by some process; the target's measure), and
  *peak RAM*, the sum of their private PSS (without shared-memory pages) plus the allocated size of Depot's
  store file, which ``posix_fallocate`` reserves whole when the store is created, touched or not (for the
  baseline, which has no store, both are its processes' PSS).

The shuffle runs ``--shuffle-runs`` times (default 2) in each cluster, one after the other: the first in a
fresh cluster, whose workers touch every page they use for the first time (on this VM a first touch of a
page costs more than the copy into it, and the store's pages, 4 KiB tmpfs pages, cost it once per process),
the second in a cluster that has run the same job before, as a long-running cluster has (store pages stay
mapped; a process's private memory is returned to the system and touched afresh).

Prints one JSON object per case with ``--json`` (fields: name, case, figures, baseline, ratio, target, met:
the shape ``depot bench`` reads), else a table. ``--quick`` uses smaller sizes and fewer repetitions.

Run by ``depot bench dask-distributed``, or as ``python dask_distributed_bench.py [--quick] [--json] [--dir DIR]``
beside ``procfs.py``.
"""

from __future__ import annotations

import argparse
import gc
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

from depot.dask.distributed import LocalCluster
from procfs import private_pss_bytes, process_tree, pss_bytes  # beside this script

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
    """Samples, every ``interval`` seconds, the summed PSS of a set of processes (and their children), and
    their summed private PSS (without shared-memory pages) plus the allocated size of ``store_file`` (Depot's
    store: its pages are RAM whether or not a process has touched them, see ``peak_resident``)."""

    def __init__(self, pids, interval=0.1, store_file=None):
        self.roots = list(pids)
        self.interval = interval
        self.store_file = store_file
        self.peak = 0
        self.peak_resident = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def sample(self):
        pids = process_tree(self.roots)
        total = sum(pss_bytes(p) for p in pids)
        self.peak = max(self.peak, total)
        resident = sum(private_pss_bytes(p) for p in pids) + _allocated_bytes(self.store_file)
        self.peak_resident = max(self.peak_resident, resident)
        return total

    def _run(self):
        while not self._stop.wait(self.interval):
            self.sample()

    def __enter__(self):
        self.peak = self.peak_resident = 0
        self.sample()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._stop.clear()
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.sample()


def _allocated_bytes(path):
    """The bytes of RAM (tmpfs) a file holds (its allocated blocks), 0 for none."""
    if path is None:
        return 0
    try:
        return os.stat(path).st_blocks * 512
    except OSError:
        return 0


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


def dataframe_shuffle(client, nbytes, pids, method, store_file=None):
    """Wall seconds, peak PSS and peak resident memory (``PssSampler``) of shuffling a DataFrame of about
    ``nbytes`` on the cluster with the shuffle ``method`` (None: the cluster's default, "depot" on a Depot
    cluster)."""
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
    with PssSampler(pids, store_file=store_file) as sampler:
        start = time.perf_counter()
        out = ddf.shuffle("key", shuffle=method)
        total = client.compute(out.value.sum()).result()
        seconds = time.perf_counter() - start
    assert np.isfinite(total)
    return seconds, sampler.peak, sampler.peak_resident


def _pids(cluster, client):
    pids = [os.getpid()]
    pids += list(client.run(os.getpid).values())
    daemon = getattr(cluster, "depot_daemon", None)
    if daemon is not None:
        pids.append(daemon.pid)
    return pids


def run(quick, store_dir, frame_mib=None, shuffle_only=False, shuffle_runs=2):
    sizes = [] if shuffle_only else [1 * MIB] if quick else [1 * MIB, 64 * MIB, 512 * MIB]
    reps = 1 if quick else 5
    results_count = 100 if quick else 2000
    frame_bytes = (frame_mib or (8 if quick else 2048)) * MIB
    # the shuffle's slices, 20 bytes a row (the key, the value and the row's position: 1.25x the frame), with a
    # fifth to spare; its output partitions stay in the workers' memory
    capacity = max((1 << 30) if quick else (2 << 30), 3 * frame_bytes // 2)
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
            depot_dir = getattr(cluster, "depot_dir", None)
            store_file = os.path.join(depot_dir, "store.depot") if depot_dir else None
            for run_number in range(1, shuffle_runs + 1):
                if run_number > 1:  # what the previous run left is released before the next one starts
                    client.run(gc.collect)
                    time.sleep(1)
                seconds, peak, resident = dataframe_shuffle(client, frame_bytes, _pids(cluster, client), method,
                                                            store_file)
                name = "shuffle %d MiB DataFrame" % (frame_bytes // MIB)
                if run_number > 1:
                    name += ", run %d" % run_number
                results.setdefault((name, "s", 1.5), {})[label] = seconds
                results.setdefault((name + " peak PSS", "bytes", 1 / 0.6), {})[label] = peak
                results.setdefault((name + " peak RAM", "bytes", None), {})[label] = resident
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
    p.add_argument("--shuffle-runs", type=int, default=2,
                   help="shuffles per cluster, one after the other (default 2: the first in a fresh cluster, "
                        "the second in one that has run it before)")
    args = p.parse_args(argv)
    store_dir = args.dir or os.path.join("/dev/shm", "depot-bench-" + uuid.uuid4().hex[:12])
    try:
        rows = run(args.quick, store_dir, args.frame_mib, args.shuffle_only, max(1, args.shuffle_runs))
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
