"""``depot bench dask-distributed``: same-node transfers and DataFrame shuffles through Depot against plain
``distributed.LocalCluster``, measured in the same run.

Cases (2 worker processes of 1 thread each in every cluster):

- transfer overhead of a float64 array of 1 MiB, 64 MiB and 512 MiB: a task on worker B that reads one element
  of an array made on worker A, minus the same task run on A (median of the repetitions);
- 2,000 results of 1 KiB made on A and consumed by one task on B (time per result);
- a pandas DataFrame of about 2 GiB shuffled on its ``key`` column (``ddf.shuffle("key")``), each variant in a
  cluster of its own:

  - the baseline, plain distributed's default over TCP: its P2P shuffle where this interpreter's distributed
    has one (2023.1 and later, with pyarrow), else its task shuffle;
  - P2P on a ``depot://`` cluster (Depot's comm and worker ``data=`` mapping), where P2P exists;
  - Depot's shuffle (``depot.dask.dataframe``, the default on a ``depot://`` cluster).

  For each: the wall time and the peak of the summed PSS (proportional set size) of every process of the
  cluster (this process, which runs the scheduler and the client, the nannies, the workers) and of the Depot
  daemon, sampled every 100 ms (``/proc/PID/smaps_rollup``), and at the peak its two parts: the store's pages
  (shared memory, ``Pss_Shmem``) and the rest (the processes' private memory). The *bound* is what one pass
  cannot go below: every row of the frame live once (its bytes in pandas), plus the summed PSS of the same
  processes before the cluster's first shuffle, once a warm-up shuffle of a 1 MiB frame with the same method
  has loaded what every shuffle needs into the workers (pandas, Dask's DataFrame code, the shuffle's own
  modules, their allocators' first arenas). That warm-up's growth is reported as a part of the bound
  (*code*), so the bound is the cluster as started + code + the frame. Each peak is reported as a ratio to the
  bound (target for Depot's shuffle: at most 1.15x), and as the cluster after the warm-up plus what the
  shuffle added in the store's pages (*store growth*: the slices, for Depot's shuffle) and in private memory
  (*private growth*: the partitions the workers hold, the pandas copies). Also the bytes the workers wrote to TCP sockets and
  passed by id during the shuffle, and the bytes they wrote to disk (P2P keeps its shards in files, whose
  page cache no PSS counts).

The shuffle runs ``--shuffle-runs`` times (default 2; 1 with ``--quick``) in each cluster, one after the other:
the first in a fresh cluster, the second in one that has run the same job before, as a long-running cluster
has.

Prints one JSON object per case with ``--json`` (fields: name, case, figures, baseline, ratio, target, met:
the shape ``depot bench`` reads), else a table. ``--quick`` uses smaller sizes and fewer repetitions. The
interpreter running this script chooses the distributed release measured (``depot bench --python PATH``).

Run by ``depot bench dask-distributed``, or as ``python dask_distributed_bench.py [--quick] [--json] [--dir DIR]``.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import inspect
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
import psutil

from depot.dask.distributed import LocalCluster

MIB = 1 << 20
#: Depot's shuffle's target: its peak memory at most this many times one pass's lower bound
BOUND_TARGET = 1.15
#: the first release whose P2P shuffle is a supported DataFrame shuffle (2022.12's was experimental)
P2P_FIRST_YEAR = 2023
TASKS, P2P, DEPOT = "tasks", "p2p", "depot"


def _first(a):
    return float(a.reshape(-1)[-1])


def _make(n):
    return np.full(n, 1.0)


def _small(i):
    return bytes(1023) + bytes([i % 256])


def _count(*parts):
    return sum(len(p) for p in parts)


# ---- measuring ------------------------------------------------------------------------------------------

def process_tree(roots):
    """``roots`` and all their living descendants, as ``psutil.Process`` objects (by pid)."""
    out = {}
    for pid in roots:
        try:
            root = psutil.Process(pid)
            out[root.pid] = root
            for child in root.children(recursive=True):
                out[child.pid] = child
        except psutil.Error:  # gone meanwhile
            pass
    return out


def pss_parts(process):
    """(PSS, its shared-memory part ``Pss_Shmem``) of ``process`` in bytes (shared pages divided among the
    processes mapping them), or (0, 0) for a process that is gone."""
    try:
        with open("/proc/%d/smaps_rollup" % process.pid) as f:
            fields = dict(line.split()[:2] for line in f if line.startswith(("Pss:", "Pss_Shmem:")))
        return int(fields["Pss:"]) * 1024, int(fields.get("Pss_Shmem:", 0)) * 1024
    except (OSError, KeyError, ValueError):  # gone meanwhile, or a kernel without smaps_rollup
        try:
            return process.memory_full_info().pss, 0
        except psutil.Error:
            return 0, 0


def summed_parts(roots):
    """(summed PSS, its shared-memory part) of ``roots`` and their descendants."""
    parts = [pss_parts(p) for p in process_tree(roots).values()]
    return sum(p for p, _ in parts), sum(s for _, s in parts)


def summed_pss(roots):
    return summed_parts(roots)[0]


class PssSampler:
    """Samples, every ``interval`` seconds, the summed PSS of a set of processes and of their descendants and
    keeps the peak, with its shared-memory part (``peak_shared``)."""

    def __init__(self, pids, interval=0.1):
        self.roots = list(pids)
        self.interval = interval
        self.peak = 0
        self.peak_shared = 0
        self._stop = threading.Event()
        self._thread = None

    def sample(self):
        total, shared = summed_parts(self.roots)
        if total > self.peak:
            self.peak, self.peak_shared = total, shared
        return total

    def _run(self):
        while not self._stop.wait(self.interval):
            self.sample()

    def __enter__(self):
        self.peak = self.peak_shared = 0
        self.sample()
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.sample()


def _count_tcp_writes():
    """In a worker: counts the bytes its comms write to TCP sockets from now on (every ``depot://`` and
    ``tcp://`` comm is a ``distributed.comm.tcp.TCP``, whose ``write`` returns the bytes it wrote). Measuring
    only: installed once per worker process by this benchmark."""
    from distributed.comm import tcp
    if getattr(tcp.TCP, "bench_bytes_written", None) is not None:
        return
    original = tcp.TCP.write
    tcp.TCP.bench_bytes_written = 0

    async def write(self, msg, serializers=None, on_error="message"):
        n = await original(self, msg, serializers=serializers, on_error=on_error)
        tcp.TCP.bench_bytes_written += n
        return n

    tcp.TCP.write = write


def _transfer_counters(dask_worker):
    """In a worker: bytes written to TCP so far, and (Depot workers) bytes passed by id."""
    from distributed.comm import tcp
    info = dask_worker.depot_info() if hasattr(dask_worker, "depot_info") else {}
    return {"tcp": getattr(tcp.TCP, "bench_bytes_written", 0) or 0, "by_id": info.get("sent_by_id_bytes", 0)}


def _disk_written(pids):
    total = 0
    for pid in pids:
        try:
            total += psutil.Process(pid).io_counters().write_bytes
        except psutil.Error:
            pass
    return total


class Traffic:
    """What the workers of ``client`` sent over TCP, by id and to disk between ``__enter__`` and ``__exit__``."""

    def __init__(self, client):
        self.client = client
        self.pids = list(client.run(os.getpid).values())

    def _read(self):
        counters = self.client.run(_transfer_counters).values()
        return (sum(c["tcp"] for c in counters), sum(c["by_id"] for c in counters), _disk_written(self.pids))

    def __enter__(self):
        self._start = self._read()
        return self

    def __exit__(self, *exc):
        end = self._read()
        self.tcp_bytes, self.by_id_bytes, self.disk_bytes = (b - a for a, b in zip(self._start, end))


# ---- cases ----------------------------------------------------------------------------------------------

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


PARTS = 16
BYTES_PER_ROW = 16  # an int64 key and a float64 value; the index is a RangeIndex


def _frame_part(i, rows):
    import pandas as pd
    rng = np.random.default_rng(i)
    return pd.DataFrame({"key": rng.integers(0, 1 << 30, rows), "value": rng.random(rows)})


def frame(nbytes):
    """A Dask DataFrame of about ``nbytes`` in ``PARTS`` partitions made on the workers, and its exact bytes in
    pandas (index included)."""
    import dask
    import dask.dataframe as dd
    rows = nbytes // BYTES_PER_ROW // PARTS
    meta = _frame_part(0, 0)
    if hasattr(dd, "from_map"):  # one blockwise layer: Dask fuses it with the tasks that consume it
        ddf = dd.from_map(_frame_part, range(PARTS), rows=rows, meta=meta)
    else:
        ddf = dd.from_delayed([dask.delayed(_frame_part)(i, rows) for i in range(PARTS)], meta=meta)
    return ddf, PARTS * int(_frame_part(0, rows).memory_usage(index=True, deep=True).sum())


def _method_keyword():
    import dask.dataframe as dd
    names = inspect.signature(dd.DataFrame.shuffle).parameters
    return "shuffle_method" if "shuffle_method" in names else "shuffle"


def _allocated_bytes(path):
    """The bytes of RAM (tmpfs) a file holds (its allocated blocks), 0 for none."""
    if path is None:
        return 0
    try:
        return os.stat(path).st_blocks * 512
    except OSError:
        return 0


#: the frame of the warm-up shuffle that loads a shuffle's code into the workers before the bound is measured
WARM_UP_BYTES = 1 * MIB


def _shuffled_sum(client, ddf, method):
    out = ddf.shuffle("key", **{_method_keyword(): method})
    return client.compute(out.value.sum()).result()


def warm_up(client, pids, method):
    """Shuffles a 1 MiB frame with ``method``, so that the workers hold what every shuffle loads (pandas,
    Dask's DataFrame code, the shuffle's modules, their allocators' first arenas) before the bound is taken.
    Returns the processes' summed PSS as started, and (summed PSS, its shared-memory part) after the warm-up."""
    import depot.dask.dataframe  # noqa: F401  (adds the "depot" shuffle method)
    started = summed_pss(pids)
    _shuffled_sum(client, frame(WARM_UP_BYTES)[0], method)
    client.run(gc.collect)
    time.sleep(1)  # the workers release the warm-up's keys
    return started, summed_parts(pids)


def dataframe_shuffle(client, nbytes, pids, method, store_file=None, cluster=None):
    """One shuffle of a DataFrame of about ``nbytes`` with ``method``: a dict of its wall seconds, the summed
    PSS of ``pids`` (and their descendants) before it and at its peak (with the peak's parts: the store's
    pages, the private rest), the frame's bytes, the lower bound of one pass's peak (the frame's bytes plus the
    processes' PSS before the cluster's first shuffle and after its warm-up; ``cluster``: ``warm_up``'s result,
    by default the PSS before this one), what the shuffle added at its peak to the cluster after the warm-up, in
    the store's pages and in private memory, the bytes the workers sent over TCP, by
    id and to disk, and the bytes of RAM the Depot store file holds afterwards (the daemon reserves the store's
    whole capacity when it creates it: those pages are RAM whether or not a process maps them, so no PSS counts
    the ones none has touched)."""
    import depot.dask.dataframe  # noqa: F401  (adds the "depot" shuffle method)
    ddf, data_bytes = frame(nbytes)
    before_parts = summed_parts(pids)
    before = before_parts[0]
    with Traffic(client) as traffic, PssSampler(pids) as sampler:
        start = time.perf_counter()
        total = _shuffled_sum(client, ddf, method)
        seconds = time.perf_counter() - start
    assert np.isfinite(total)
    started, (warm, warm_shared) = (before, before_parts) if cluster is None else cluster
    bound = warm + data_bytes
    return {"seconds": seconds, "peak_pss_bytes": sampler.peak, "peak_store_pss_bytes": sampler.peak_shared,
            "peak_private_pss_bytes": sampler.peak - sampler.peak_shared,
            "store_growth_bytes": sampler.peak_shared - warm_shared,
            "private_growth_bytes": sampler.peak - sampler.peak_shared - (warm - warm_shared),
            "before_pss_bytes": before,
            "cluster_pss_bytes": warm, "started_pss_bytes": started, "code_bytes": warm - started,
            "data_bytes": data_bytes, "bound_bytes": bound,
            "peak_over_bound": sampler.peak / bound,
            "tcp_bytes": traffic.tcp_bytes, "by_id_bytes": traffic.by_id_bytes, "disk_bytes": traffic.disk_bytes,
            "store_allocated_bytes": _allocated_bytes(store_file)}


def _pids(cluster, client):
    """This process (the scheduler and the client; its descendants are the nannies and workers), the workers,
    and the Depot daemon serving the cluster's store."""
    pids = [os.getpid()] + list(client.run(os.getpid).values())
    depot_client = getattr(cluster, "depot_client", None)
    if depot_client is not None:
        pids.append(depot_client.daemon_pid)
    return pids


def p2p_available():
    """True when this interpreter's distributed shuffles DataFrames with P2P (2023.1 and later, with pyarrow)."""
    year = int(distributed.__version__.split(".")[0])
    return year >= P2P_FIRST_YEAR and importlib.util.find_spec("pyarrow") is not None


def variants():
    """(label, cluster kind, shuffle method) of each shuffle measured; the first is the baseline."""
    if p2p_available():
        return [("P2P over TCP", "plain", P2P), ("P2P on depot://", "depot", P2P), ("Depot's shuffle", "depot", DEPOT)]
    return [("task shuffle over TCP", "plain", TASKS), ("Depot's shuffle", "depot", DEPOT)]


def run(quick, store_dir, frame_mib=None, shuffle_only=False, shuffle_runs=None):
    sizes = [] if shuffle_only else [1 * MIB] if quick else [1 * MIB, 64 * MIB, 512 * MIB]
    reps = 1 if quick else 5
    results_count = 100 if quick else 2000
    frame_bytes = (frame_mib or (8 if quick else 2048)) * MIB
    shuffle_runs = shuffle_runs or (1 if quick else 2)
    # Depot's shuffle's slices, 20 bytes a row (the key, the value and the row's position: 1.25x the frame),
    # with a fifth to spare; its output partitions stay in the workers' memory
    capacity = max((1 << 30) if quick else (2 << 30), 3 * frame_bytes // 2)
    plain = dict(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    makers = {"depot": lambda: LocalCluster(depot_dir=store_dir, depot_capacity=capacity, **plain),
              "plain": lambda: distributed.LocalCluster(**plain)}
    transfers, shuffles = {}, {}
    measured_transfers = set()
    for label, kind, method in variants():
        with makers[kind]() as cluster, distributed.Client(cluster) as client:
            client.run(_count_tcp_writes)
            if kind not in measured_transfers:  # once per kind of cluster
                measured_transfers.add(kind)
                for size in sizes:
                    transfers.setdefault(("transfer %d MiB" % (size // MIB), "s", 20.0 if size >= 64 * MIB else None),
                                         {})[kind] = transfer_overhead(client, size // 8, reps)
                if not shuffle_only:
                    transfers.setdefault(("%d 1 KiB results" % results_count, "s/result", None), {})[kind] = \
                        small_results(client, results_count)
            depot_dir = getattr(cluster, "depot_dir", None)
            store_file = os.path.join(depot_dir, "store.depot") if depot_dir else None
            pids = _pids(cluster, client)
            # the bound of every run counts the cluster's processes as they were before its first shuffle (after
            # the warm-up): what a run leaves mapped or allocated (store pages, heaps not returned) is its own cost
            started = warm_up(client, pids, method)
            for run_number in range(1, shuffle_runs + 1):
                if run_number > 1:  # what the previous run left is released before the next one starts
                    client.run(gc.collect)
                    time.sleep(1)
                shuffles.setdefault(run_number, {})[label] = dataframe_shuffle(
                    client, frame_bytes, pids, method, store_file, started)
    rows = []
    for (case, unit, target), figures in transfers.items():
        value, base = figures["depot"], figures["plain"]
        # An overhead too small to measure (cross-worker no slower than same-worker, within the noise) counts as
        # the timer's microsecond: the ratio is then a lower bound, never a missing figure.
        ratio = base / max(value, _UNMEASURABLE_SECONDS)
        rows.append(_row(case, {"value": value, "unit": unit},
                         {"kind": "plain distributed.LocalCluster (TCP)", "value": base, "unit": unit}, ratio,
                         "" if target is None else ">= %.3gx lower than the baseline" % target,
                         ratio >= target if target is not None else False))
    baseline_label = variants()[0][0]
    for run_number, by_label in shuffles.items():
        base = by_label[baseline_label]
        for label, figures in by_label.items():
            if label == baseline_label:
                continue
            case = "shuffle %d MiB DataFrame: %s" % (frame_bytes // MIB, label)
            if run_number > 1:
                case += ", run %d" % run_number
            depot_shuffle = label == "Depot's shuffle"
            rows.append(_row(case, dict(figures, peak_vs_baseline=figures["peak_pss_bytes"] / base["peak_pss_bytes"]),
                             dict(base, kind="%s, plain distributed %s" % (baseline_label, distributed.__version__)),
                             base["seconds"] / figures["seconds"],
                             "peak PSS <= %.2fx the bound" % BOUND_TARGET if depot_shuffle else "",
                             depot_shuffle and figures["peak_over_bound"] <= BOUND_TARGET))
    return rows


def _row(case, figures, baseline, ratio, target, met):
    return {"name": "dask-distributed", "case": case, "figures": figures, "baseline": baseline, "ratio": ratio,
            "target": target, "met": bool(met)}


def _human(r):
    f, b = r["figures"], r["baseline"]
    if "value" in f:
        return "%-44s depot %12.6g  baseline %12.6g %-8s  ratio %8.2fx" % (
            r["case"], f["value"], b["value"], f["unit"], r["ratio"])
    return ("%-44s %6.1f s (baseline %6.1f s, %.2fx)  peak PSS %5.2f GB (store %.2f + private %.2f) = cluster and"
            " code %.2f + store growth %.2f + private growth %.2f = %.2fx the bound %5.2f GB (cluster %.2f + code %.2f + frame"
            " %.2f) (baseline %5.2f GB = %.2fx)  TCP %.2f GB, by id %.2f GB, disk %.2f GB" % (
                r["case"], f["seconds"], b["seconds"], r["ratio"], f["peak_pss_bytes"] / 1e9,
                f["peak_store_pss_bytes"] / 1e9, f["peak_private_pss_bytes"] / 1e9, f["cluster_pss_bytes"] / 1e9,
                f["store_growth_bytes"] / 1e9, f["private_growth_bytes"] / 1e9, f["peak_over_bound"],
                f["bound_bytes"] / 1e9, f["started_pss_bytes"] / 1e9, f["code_bytes"] / 1e9, f["data_bytes"] / 1e9,
                b["peak_pss_bytes"] / 1e9, b["peak_over_bound"], f["tcp_bytes"] / 1e9,
                f["by_id_bytes"] / 1e9, f["disk_bytes"] / 1e9))


def main(argv=None):
    p = argparse.ArgumentParser(prog="depot bench dask-distributed", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="smaller sizes, fewer repetitions")
    p.add_argument("--json", action="store_true", help="one JSON object per case")
    p.add_argument("--dir", help="store directory (default: a fresh one under /dev/shm, removed afterwards)")
    p.add_argument("--frame-mib", type=int, help="size of the shuffled DataFrame in MiB (default 2048; 8 quick)")
    p.add_argument("--shuffle-only", action="store_true", help="only the DataFrame shuffle cases")
    p.add_argument("--shuffle-runs", type=int,
                   help="shuffles per cluster, one after the other (default 2, 1 with --quick: the first in a "
                        "fresh cluster, the second in one that has run it before)")
    args = p.parse_args(argv)
    store_dir = args.dir or os.path.join("/dev/shm", "depot-bench-" + uuid.uuid4().hex[:12])
    try:
        rows = run(args.quick, store_dir, args.frame_mib, args.shuffle_only,
                   None if args.shuffle_runs is None else max(1, args.shuffle_runs))
    finally:
        if args.dir is None:
            shutil.rmtree(store_dir, ignore_errors=True)
    if not args.json:
        print("distributed %s (%s)" % (distributed.__version__, sys.executable))
    for r in rows:
        print(json.dumps(r) if args.json else _human(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
