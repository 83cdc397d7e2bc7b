"""The sort demo in Python: a sample sort of ``--count`` numbers by NumPy worker processes through a
``depot.shuffle``, beside ``np.sort`` and pandas ``sort_values`` of the same data in the same run.

    PYTHONPATH=python python3 depot-bench/src/main/resources/dev/depot/bench/sort_demo.py \
        [--count 1e7] [--workers N] [--dtype float64|int64] [--dir DIR] [--json]

A driver of depot-bench, not part of the ``depot`` package. Without ``--dir`` it starts a daemon of its own
(``bin/depot serve`` of the checkout it is in) on a fresh store under /dev/shm and stops it at the end. The order is ``np.sort``'s: NaN last; -0.0 and 0.0 compare equal.
See docs/SHUFFLE.md.
"""

import argparse
import json
import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid

__all__ = ["checksum", "disorder", "generate", "main", "sample_sort", "splitters"]

BLOCK = 1 << 20
SAMPLES_PER_WORKER = 4096
SPECIAL_EVERY = 16


def _np():
    try:
        import numpy
    except ImportError:
        raise ImportError("the sort example needs NumPy: pip install 'depot-shm[numpy]'") from None
    return numpy


def generate(dtype, seed, start, stop, specials=False):
    """Values ``[start, stop)`` of the data set: generated in blocks of ``BLOCK`` from ``(seed, block)``, so the
    same whatever the split between workers."""
    np = _np()
    out = np.empty(stop - start, dtype=dtype)
    at = start
    while at < stop:
        block = at // BLOCK
        end = min(stop, (block + 1) * BLOCK)
        rng = np.random.default_rng([seed, block])
        n = (block + 1) * BLOCK - block * BLOCK
        if np.dtype(dtype).kind == "f":
            values = rng.uniform(-1e9, 1e9, n)
        else:
            values = rng.integers(np.iinfo(np.int64).min, np.iinfo(np.int64).max, n, dtype=np.int64,
                                  endpoint=True)
        out[at - start:end - start] = values[at - block * BLOCK:end - block * BLOCK]
        at = end
    if specials:
        first = -(-start // SPECIAL_EVERY) * SPECIAL_EVERY
        idx = np.arange(first, stop, SPECIAL_EVERY)
        pool = (np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, 1.0, 1.0, 5e-324]) if np.dtype(dtype).kind == "f"
                else np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max, 0, -1, 42], dtype=np.int64))
        out[idx - start] = pool[(idx // SPECIAL_EVERY) % len(pool)]
    return out


def checksum(values):
    """Order-independent checksum: the sum of a 64-bit mix of every value's bits, mod 2**64. For floats, -0.0
    counts as 0.0 and every NaN as the same NaN: NumPy's (SIMD) sort does not keep which zero was which."""
    np = _np()
    values = np.ascontiguousarray(values)
    if values.dtype.kind == "f":
        values = np.where(np.isnan(values), np.nan, values + 0.0)  # -0.0 + 0.0 is 0.0
    z = values.view(np.uint64).copy()
    with np.errstate(over="ignore"):
        z ^= z >> np.uint64(33)
        z *= np.uint64(0xFF51AFD7ED558CCD)
        z ^= z >> np.uint64(33)
        z *= np.uint64(0xC4CEB9FE1A85EC53)
        z ^= z >> np.uint64(33)
        return int(z.sum(dtype=np.uint64))


def disorder(values):
    """Index of the first value out of ``np.sort`` order, or -1 when sorted (NaNs must all be at the end)."""
    np = _np()
    if values.size < 2:
        return -1
    bad = np.flatnonzero(values[1:] < values[:-1])
    if values.dtype.kind == "f":
        nan = np.isnan(values)
        if nan.any():
            first = int(nan.argmax())
            if not nan[first:].all():
                bad = np.append(bad, first)
    return int(bad.min()) if bad.size else -1


def splitters(samples, partitions):
    """``partitions - 1`` splitters at even ranks of the sorted samples."""
    np = _np()
    s = np.sort(samples)
    return s[[len(s) * i // partitions for i in range(1, partitions)]] if len(s) else np.empty(0, s.dtype)


def sample_sort(values, partitions, seed=0):
    """Sorts ``values`` in one process the way the workers do together (sample, split, sort each part); for
    tests of the order."""
    np = _np()
    from depot.shuffle import partition_array
    rng = np.random.default_rng(seed)
    samples = values[rng.integers(0, len(values), 64)] if len(values) else values[:0]
    parts = partition_array(values, splitters(samples, partitions))
    return np.concatenate([np.sort(p) for p in parts])


def _worker(directory, shuffle_id, worker, workers, count, dtype, seed, specials, results):
    """One worker process: generate its share, publish samples, partition into the shuffle, gather its
    partition, sort, check. Puts its figures on ``results``."""
    import depot
    from depot.shuffle import Shuffle
    np = _np()
    r = {"worker": worker}
    t = time.perf_counter()

    def phase(name):
        nonlocal t
        now = time.perf_counter()
        r[name + "_s"] = now - t
        t = now

    with depot.connect(directory) as client:
        samples = Shuffle.open(client, shuffle_id + "-samples", timeout=600)
        data = Shuffle.open(client, shuffle_id, timeout=600)
        blocks = -(-count // BLOCK)
        start = min(count, blocks * worker // workers * BLOCK)
        stop = min(count, blocks * (worker + 1) // workers * BLOCK)
        mine = generate(dtype, seed, start, stop, specials)
        r["in"] = checksum(mine)
        phase("generate")
        r["started_at"] = time.time()  # the timed sort starts when the last worker is here: all data exists
        rng = np.random.default_rng([seed, 1_000_000 + worker])
        samples.write_map(worker, [mine[rng.integers(0, len(mine), SAMPLES_PER_WORKER)] if len(mine) else mine[:0]])
        with samples.reader(0, timeout=600) as sr:
            split = splitters(np.concatenate(sr.arrays()), workers)
        phase("sample")
        index = np.searchsorted(split, mine, side="right")
        counts = np.bincount(index, minlength=workers)
        with data.writer(worker, [int(c) * mine.itemsize for c in counts]) as w:
            for p in range(workers):
                if counts[p]:
                    np.compress(index == p, mine, out=w.array(p))
            w.commit()
        r["shuffled"] = mine.nbytes
        del mine, index
        phase("partition")
        with data.reader(worker, timeout=600) as rr:
            part = rr.array()  # one copy out of shared memory, into this worker's array
        phase("shuffle")
        part.sort()
        phase("sort")
        r["sorted_at"] = time.time()
        r["count"] = len(part)
        r["disorder"] = disorder(part)
        r["out"] = checksum(part)
        if len(part):
            r["first"], r["last"] = part[0].item(), part[-1].item()
        phase("verify")
    results.put(r)


#: mappings whose pages are shared memory (tmpfs files such as a Depot store, System V segments, memfds, shared
#: anonymous memory): what the kernel counts as Pss_Shmem
_SHARED_MEMORY_PATHS = ("/dev/shm/", "/SYSV", "/memfd:", "/dev/zero")


def _private_pss_bytes(pid):
    """The proportional set size of ``pid`` without shared-memory pages (a Depot store's are the store's, counted
    once), or 0 when the process is gone."""
    try:
        import psutil
    except ImportError:
        raise ImportError("the sort demo measures memory with psutil: pip install psutil") from None
    try:
        maps = psutil.Process(pid).memory_maps(grouped=True)
    except (psutil.Error, OSError):
        return 0
    return sum(m.pss for m in maps if not m.path.startswith(_SHARED_MEMORY_PATHS))


class _MemorySampler:
    """Samples, every 100 ms, the run's memory: the store file (reserved when created) plus the private PSS
    (store pages excluded: they are the store's) of this process and of every watched one."""

    def __init__(self, directory=None, pids=()):
        import threading
        self._directory = directory
        self._pids = set(pids) | {os.getpid()}
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def watch(self, pid):
        self._pids.add(pid)

    def sample(self):
        total = 0
        if self._directory is not None:
            try:
                total += sum(e.stat().st_size for e in os.scandir(self._directory) if e.is_file())
            except OSError:
                pass
        total += sum(_private_pss_bytes(pid) for pid in list(self._pids))
        self.peak = max(self.peak, total)
        return total

    def _loop(self):
        while not self._stop.wait(0.1):
            self.sample()

    def close(self):
        self._stop.set()
        self._thread.join()
        self.sample()
        return self.peak


def _launcher():
    """``bin/depot`` of the checkout this file is in, or None."""
    here = os.path.dirname(os.path.abspath(__file__))
    while os.path.dirname(here) != here:
        command = os.path.join(here, "bin", "depot")
        if os.access(command, os.X_OK):
            return command
        here = os.path.dirname(here)
    return None


def _start_daemon(directory, capacity):
    command = _launcher()
    if command is None:
        raise SystemExit("depot sort: no bin/depot above %s to start a daemon with; pass --dir of a running one"
                         % os.path.abspath(__file__))
    proc = subprocess.Popen([command, "serve", "--dir", directory, "--capacity", str(capacity)],
                            stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while not os.path.exists(os.path.join(directory, "depot.sock")):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise SystemExit("depot sort: the daemon did not start (status %s)" % proc.poll())
        time.sleep(0.1)
    return proc


def _stop_daemon(proc):
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def run_depot(directory, count, workers, dtype, seed, specials, daemon_pid=None):
    """One sample sort with ``workers`` processes; returns its figures."""
    import depot
    from depot.shuffle import Shuffle
    shuffle_id = "pysort-" + uuid.uuid4().hex
    ctx = multiprocessing.get_context("spawn")
    results = ctx.Queue()
    start = time.perf_counter()
    memory = _MemorySampler(directory, [daemon_pid] if daemon_pid else [])
    with depot.connect(directory) as client, \
            Shuffle.create(client, shuffle_id + "-samples", workers, 1, dtype=dtype), \
            Shuffle.create(client, shuffle_id, workers, workers, dtype=dtype):
        procs = [ctx.Process(target=_worker, args=(directory, shuffle_id, w, workers, count, dtype, seed, specials,
                                                   results)) for w in range(workers)]
        for p in procs:
            p.start()
            memory.watch(p.pid)
        try:
            got = []
            while len(got) < workers:
                try:
                    got.append(results.get(timeout=1))
                except Exception:
                    dead = [p for p in procs if p.exitcode not in (None, 0)]
                    if dead:
                        raise RuntimeError("sort worker pid %d failed with status %d" % (dead[0].pid, dead[0].exitcode))
            for p in procs:
                p.join()
        finally:
            for p in procs:
                if p.is_alive():
                    p.kill()
                    p.join()
    got.sort(key=lambda r: r["worker"])
    ordered = all(r["disorder"] == -1 for r in got)
    previous = None
    for r in got:
        if r["count"]:
            # in order across workers; NaN sorts last, so after a part ending in NaN only NaNs may follow
            if previous is not None and not (previous <= r["first"] or (previous != previous and r["first"] != r["first"])):
                ordered = False
            previous = r["last"]
    phases = {k: max(r[k] for r in got)
              for k in ("generate_s", "sample_s", "partition_s", "shuffle_s", "sort_s", "verify_s")}
    return {"run": str(workers), "workers": workers, "wall_s": time.perf_counter() - start,
            "sort_s": max(r["sorted_at"] for r in got) - max(r["started_at"] for r in got),
            "count": sum(r["count"] for r in got), "in": sum(r["in"] for r in got) % (1 << 64),
            "out": sum(r["out"] for r in got) % (1 << 64), "sorted": ordered,
            "bytes_shuffled": sum(r["shuffled"] for r in got), "peak_memory_bytes": memory.close(), "phases": phases}


def run_single(count, dtype, seed, specials, with_pandas=True):
    """np.sort (and pandas sort_values) of the same data in this process."""
    np = _np()
    start = time.perf_counter()
    memory = _MemorySampler()
    values = generate(dtype, seed, 0, count, specials)
    out = []
    t = time.perf_counter()
    s = np.sort(values)
    out.append({"run": "np.sort", "workers": 0, "sort_s": time.perf_counter() - t, "count": len(s),
                "in": checksum(values), "out": checksum(s), "sorted": disorder(s) == -1})
    out[-1]["peak_memory_bytes"] = memory.close()
    out[-1]["wall_s"] = time.perf_counter() - start
    del s
    if with_pandas:
        try:
            import pandas as pd
        except ImportError:
            pd = None
        if pd is not None:
            start = time.perf_counter()
            memory = _MemorySampler()
            frame = pd.DataFrame({"x": values})
            t = time.perf_counter()
            sorted_frame = frame.sort_values("x")
            x = sorted_frame["x"].to_numpy()
            out.append({"run": "pandas sort_values", "workers": 0, "sort_s": time.perf_counter() - t, "count": len(x),
                        "in": out[0]["in"], "out": checksum(x), "sorted": disorder(x) == -1,
                        "peak_memory_bytes": memory.close()})
            out[-1]["wall_s"] = time.perf_counter() - start
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(prog="sort_demo.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", default="1e7", help="how many numbers (default 1e7)")
    parser.add_argument("--workers", type=int, default=max(2, os.cpu_count() or 2))
    parser.add_argument("--dtype", default="float64", choices=["float64", "int64"])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--dir", help="store directory of a running daemon (default: start one)")
    parser.add_argument("--specials", action="store_true", help="mix in NaN, -0.0, infinities and duplicates")
    parser.add_argument("--no-pandas", action="store_true", help="skip the pandas sort_values baseline")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    count = int(float(args.count))
    np = _np()
    dtype = np.dtype(args.dtype).str
    daemon = None
    directory = args.dir
    if directory is None:
        directory = os.path.join("/dev/shm", "depot-pysort-" + uuid.uuid4().hex)
        daemon = _start_daemon(directory, count * 8 + count * 8 // 16 + (64 << 20))
    try:
        import depot
        depot.connect(directory).close()  # fail now, not after the baselines, when there is no daemon
        runs = run_single(count, dtype, args.seed, args.specials, not args.no_pandas)
        for n in sorted({1, args.workers}):
            runs.append(run_depot(directory, count, n, dtype, args.seed, args.specials,
                                  daemon.pid if daemon is not None else None))
    finally:
        if daemon is not None:
            _stop_daemon(daemon)
            shutil.rmtree(directory, ignore_errors=True)
    base = runs[0]["sort_s"]
    for r in runs:
        r["speedup"] = base / r["sort_s"] if r["sort_s"] > 0 else None
        r["verified"] = bool(r["sorted"] and r["count"] == count and r["in"] == r["out"] == runs[0]["in"])
    widest = max((r for r in runs if r["workers"]), key=lambda r: r["workers"])
    report = {"count": count, "workers": args.workers, "dtype": args.dtype, "single_process_s": base,
              "depot_s": widest["sort_s"], "speedup": widest["speedup"],
              "verified": all(r["verified"] for r in runs), "bytes_shuffled": widest["bytes_shuffled"],
              "phases": widest["phases"], "peak_memory_bytes": max(r["peak_memory_bytes"] for r in runs),
              "runs": [{k: v for k, v in r.items() if k not in ("in", "out", "sorted")} for r in runs]}
    if args.json:
        print(json.dumps(report))
    else:
        print("\nsort_demo.py: %s %s values (%.1f MiB), %d core(s)\n"
              % (format(count, ","), args.dtype, count * 8 / 2**20, os.cpu_count() or 0))
        print("%-24s %9s %9s %9s %12s %22s %9s" % ("run", "wall s", "sort s", "speed-up", "shuffled", "peak memory",
                                                  "verified"))
        for r in runs:
            title = r["run"] if not r["workers"] else "depot, %d worker%s" % (r["workers"], "s" * (r["workers"] > 1))
            print("%-24s %9.2f %9.2f %8.2fx %12s %10.1f MiB (%4.2fx) %9s" % (
                title, r["wall_s"], r["sort_s"], r["speedup"] or 0,
                "%.1f MiB" % (r["bytes_shuffled"] / 2**20) if r["workers"] else "-",
                r["peak_memory_bytes"] / 2**20, r["peak_memory_bytes"] / (count * 8), r["verified"]))
        print("\nsort s: the sort alone for np.sort and pandas; for Depot, from the last worker's values generated to"
              " the last local sort done (sample + partition + shuffle + local sort); generation and verification"
              " are outside it in all. peak memory: the store file plus every process's private PSS (store pages"
              " excluded), sampled every 100 ms.")
        print("time split (%s workers, slowest worker per phase): %s" % (widest["workers"], ", ".join(
            "%s %.2f s" % (k[:-2], v) for k, v in widest["phases"].items())))
    return 0 if report["verified"] else 1


if __name__ == "__main__":
    sys.exit(main())
