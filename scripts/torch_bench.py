"""The depot.torch benchmark (scripts/bench-torch): two training processes x two DataLoader workers read a
synthetic dataset (~3 ms of CPU and ~0.5 MB per sample) for two epochs, plain (decoded every epoch, batches
handed over by torch's shared memory) and through Depot (SharedCache + batches by id), in the same run.

Reports per mode: each epoch's time (the slower trainer's; with the second epoch, the pages of shared memory its
processes touched for the first time and what those touches cost at least: the pages times a first touch's cost,
measured in the same run, over the cores), the peak sum of PSS over both trainers and their
workers (Depot's above plain's, in decoded copies of the dataset: the cache's one copy is the floor), and the batch
hand-off time (from the start of a worker's collate to the batch in the trainer, median
of the second epoch, queue waits included). ``--json``: one object per case, with the fields of
``depot bench``'s results. Needs torch and NumPy; the store's daemon needs the built launcher.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLE_FLOATS = 128 * 1024  # 0.5 MiB of float32
DECODE_SECONDS = 0.003


# ---- the training process --------------------------------------------------------------------------------

def synthetic_dataset():
    import torch

    class Synthetic(torch.utils.data.Dataset):
        """Sample i: 0.5 MiB of float32 made by ~3 ms of CPU, and its label."""

        def __init__(self, n):
            self.n = n

        def __len__(self):
            return self.n

        def __getitem__(self, i):
            start = time.thread_time()
            g = torch.Generator().manual_seed(i)
            x = torch.rand(SAMPLE_FLOATS, generator=g)
            while time.thread_time() - start < DECODE_SECONDS:
                x = x * 0.5 + 0.25
            return x.reshape(128, 1024), i % 10

    return Synthetic


def train(mode, directory, n, batch_size, epochs):
    """One training process: prints one JSON line with its epoch times and hand-off times."""
    import torch
    torch.set_num_threads(1)
    from torch.utils.data import DataLoader, default_collate
    dataset = synthetic_dataset()(n)
    if mode == "plain":
        def collate(samples):
            started = time.time()
            return default_collate(samples), started

        def receive(item):
            return item
        cleanup = None
    else:
        import depot.torch
        from depot._task_context import client_for
        dataset = depot.torch.SharedCache(dataset, dir=directory, namespace="bench-%d" % n)
        writer = depot.torch.BatchWriter(directory)
        client = client_for(directory)

        def collate(samples):
            started = time.time()
            return writer(samples), started

        def receive(item):
            ref, started = item
            return depot.torch.read_batch(client, ref), started
        cleanup = writer.discard
    loader = DataLoader(dataset, batch_size=batch_size, num_workers=2, collate_fn=collate, shuffle=True,
                        persistent_workers=True,  # as training loops run: the epochs time the data, not the start
                        generator=torch.Generator().manual_seed(os.getpid()))
    times, handoffs, new_pages = [], [], []
    mapped = shmem_pages_of_tree(os.getpid())
    for _ in range(epochs):
        start = time.perf_counter()
        epoch_handoffs = []
        for item in loader:
            (images, labels), started = receive(item)
            epoch_handoffs.append(time.time() - started)
            assert images.shape[1:] == (128, 1024)
            float(images[:, 0, 0].sum())  # touch each batch, as a model would
            del images, labels, item
        times.append(time.perf_counter() - start)
        handoffs.append(statistics.median(epoch_handoffs))
        now = shmem_pages_of_tree(os.getpid())
        new_pages.append(max(0, now - mapped))
        mapped = now
        if cleanup is not None:
            cleanup()
    print(json.dumps({"epochs": times, "handoff": handoffs, "new_pages": new_pages}), flush=True)


# ---- the driver ------------------------------------------------------------------------------------------

def shmem_pages_of_tree(pid):
    """The 4 KiB pages of shared memory mapped by ``pid`` and its descendants (``RssShmem``): their growth over an
    epoch counts the pages those processes touched for the first time through their mappings."""
    pages = 0
    for p in [pid] + descendants(pid):
        try:
            with open("/proc/%d/status" % p) as f:
                for line in f:
                    if line.startswith("RssShmem:"):
                        pages += int(line.split()[1]) // 4
        except OSError:
            pass
    return pages


def first_touch_micros(mib=64):
    """The cost of a process's first read of a 4 KiB page of shared memory that exists already, through a new
    mapping (the page-table entry the kernel fills in, and on a VM the hypervisor's): microseconds per page, the
    median of three probes of ``mib`` MiB."""
    import mmap
    import tempfile
    size, page = mib << 20, mmap.PAGESIZE
    fd, path = tempfile.mkstemp(prefix="depot-bench-torch-probe-", dir="/dev/shm")
    try:
        os.ftruncate(fd, size)
        with mmap.mmap(fd, size) as writer:
            for i in range(0, size, page):
                writer[i] = 1
        costs = []
        for _ in range(3):
            with mmap.mmap(fd, size, prot=mmap.PROT_READ) as reader:
                start = time.perf_counter()
                for i in range(0, size, page):
                    reader[i]
                costs.append((time.perf_counter() - start) / (size // page) * 1e6)
        return statistics.median(costs)
    finally:
        os.close(fd)
        os.unlink(path)


def pss_of_tree(pid):
    """``(PSS, its shared-memory part)`` in bytes, summed over ``pid`` and its descendants, from
    /proc/PID/smaps_rollup."""
    total = shmem = 0
    for p in [pid] + descendants(pid):
        try:
            with open("/proc/%d/smaps_rollup" % p) as f:
                for line in f:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1]) * 1024
                    elif line.startswith("Pss_Shmem:"):
                        shmem += int(line.split()[1]) * 1024
        except OSError:
            pass
    return total, shmem


def descendants(pid):
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            with open("/proc/%d/task/%d/children" % (p, p)) as f:
                kids = [int(x) for x in f.read().split()]
        except OSError:
            kids = []
        out += kids
        todo += kids
    return out


def run_mode(mode, directory, n, batch_size, epochs):
    """Two training processes at once; ``(epoch times, hand-off time, (peak PSS sum, its shared-memory part),
    pages of shared memory first touched in the last epoch)``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(os.path.dirname(HERE), "python") + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [sys.executable, os.path.abspath(__file__), "--train", mode, "--dir", directory, "--samples", str(n),
           "--batch", str(batch_size), "--epochs", str(epochs)]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env) for _ in range(2)]
    peak = [(0, 0)]
    done = threading.Event()

    def sample():
        while not done.is_set():
            trees = [pss_of_tree(p.pid) for p in procs]
            now = (sum(t[0] for t in trees), sum(t[1] for t in trees))
            peak[0] = max(peak[0], now)
            done.wait(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        outs = [p.communicate(timeout=1800)[0] for p in procs]
    finally:
        done.set()
        sampler.join()
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    if any(p.returncode != 0 for p in procs):
        raise SystemExit("torch bench: a %s training process failed (exit %s)" % (mode, [p.returncode for p in procs]))
    results = [json.loads(o.strip().splitlines()[-1]) for o in outs]
    epochs_max = [max(r["epochs"][e] for r in results) for e in range(epochs)]
    handoff = statistics.median(r["handoff"][-1] for r in results)
    new_pages = sum(r["new_pages"][-1] for r in results)
    return epochs_max, handoff, peak[0], new_pages


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="64 samples (the smoke test)")
    parser.add_argument("--json", action="store_true", help="one JSON object per case")
    parser.add_argument("--train", help=argparse.SUPPRESS)
    parser.add_argument("--dir", help=argparse.SUPPRESS)
    parser.add_argument("--samples", type=int, help="samples in the dataset (default 64 quick, 1024 full)")
    parser.add_argument("--batch", type=int, default=None)
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()
    n = args.samples or (64 if args.quick else 1024)
    batch = args.batch or (8 if args.quick else 32)
    if args.train:
        return train(args.train, args.dir, n, batch, args.epochs)

    import depot
    sample_bytes = SAMPLE_FLOATS * 4
    one_copy = n * sample_bytes
    directory = os.path.join("/dev/shm", "depot-bench-torch-" + uuid.uuid4().hex)
    capacity = max(256 << 20, int(one_copy * 1.5))
    touch_us = first_touch_micros()
    cores = len(os.sched_getaffinity(0))
    daemon = depot.start(directory, capacity=capacity)
    try:
        plain = run_mode("plain", directory, n, batch, args.epochs)
        shared = run_mode("depot", directory, n, batch, args.epochs)
        with depot.connect(directory) as client:
            evictions = client.stat().eviction_count
    finally:
        daemon.stop()
        shutil.rmtree(directory, ignore_errors=True)
    (p_epochs, p_handoff, (p_pss, p_shmem), _), (d_epochs, d_handoff, (d_pss, d_shmem), d_new) = plain, shared
    # The second epoch's first touches of pages new to a process (samples decoded by other workers, batch memory
    # not used before) cost at least this on the machine's cores, however little else the epoch does.
    d_floor = d_new * touch_us * 1e-6 / cores
    cases = [
        ("epoch 1", {"seconds": round(d_epochs[0], 3)}, {"seconds": round(p_epochs[0], 3)},
         p_epochs[0] / d_epochs[0], "report", None),
        ("epoch %d" % len(d_epochs), {"seconds": round(d_epochs[-1], 3), "first-touched pages": d_new,
                     "first touch us/page": round(touch_us, 2), "their floor s": round(d_floor, 3)},
         {"seconds": round(p_epochs[-1], 3)},
         p_epochs[-1] / d_epochs[-1], ">= 5x faster than decoding", p_epochs[-1] / d_epochs[-1] >= 5),
        ("peak PSS sum", {"bytes": d_pss, "above plain": d_pss - p_pss, "shared memory": d_shmem,
                          "store evictions": evictions},
         {"bytes": p_pss, "shared memory": p_shmem, "decoded copy bytes": one_copy}, (d_pss - p_pss) / one_copy,
         "<= 1.2 decoded copies above plain (ratio: copies)", d_pss - p_pss <= 1.2 * one_copy),
        ("batch hand-off", {"ms": round(d_handoff * 1e3, 2)}, {"ms": round(p_handoff * 1e3, 2)},
         p_handoff / d_handoff, "report", None),
    ]
    for name, figures, baseline, ratio, target, met in cases:
        if args.json:
            print(json.dumps({"name": "torch", "case": name, "figures": figures, "baseline": baseline,
                              "ratio": round(ratio, 3), "target": target,
                              "met": None if met is None else bool(met)}), flush=True)
        else:
            print("torch %-15s depot %-45s plain %-45s ratio %6.2fx  %s%s" % (
                name, figures, baseline, ratio, target, "" if met is None else (" met" if met else " NOT met")),
                flush=True)


if __name__ == "__main__":
    main()
