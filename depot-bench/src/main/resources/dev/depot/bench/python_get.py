"""python-get benchmark, Python side (run by dev.depot.bench.PythonGetBench).

Gets a float64 array that a Java process put into the store and sums it, against receiving the same array
pickled through a multiprocessing pipe and summing it, in the same run. Prints one JSON line.
usage: python_get.py DIR NAME NBYTES REPS
"""
import json
import multiprocessing as mp
import sys
import time

import numpy as np

import depot


def pipe_consumer(conn):
    while True:
        arr = conn.recv()
        if arr is None:
            return
        conn.send(float(arr.sum()))


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def main():
    directory, name, nbytes, reps = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    n = nbytes // 8
    expected = float(n) * (n - 1) / 2

    client = depot.connect(directory)
    oid = depot.ObjectId.of(name)
    get_ns, total_ns = [], []
    for _ in range(reps + 1):
        t0 = time.perf_counter_ns()
        arr = client.get_array(oid, timeout=30)
        t1 = time.perf_counter_ns()
        s = float(arr.sum())
        t2 = time.perf_counter_ns()
        if s != expected:
            raise SystemExit("wrong sum %r, expected %r" % (s, expected))
        if not np.shares_memory(arr, arr) or arr.flags.owndata:
            raise SystemExit("the array is a copy")
        del arr
        client.flush()
        get_ns.append(t1 - t0)
        total_ns.append(t2 - t0)
    client.close()

    local = np.arange(n, dtype=np.float64)
    t0 = time.perf_counter_ns()
    float(local.sum())
    sum_only_ns = time.perf_counter_ns() - t0

    parent, child = mp.Pipe()
    proc = mp.Process(target=pipe_consumer, args=(child,))
    proc.start()
    try:
        pipe_ns = []
        for _ in range(reps):
            t0 = time.perf_counter_ns()
            parent.send(local)
            s = parent.recv()
            pipe_ns.append(time.perf_counter_ns() - t0)
            if s != expected:
                raise SystemExit("pipe: wrong sum")
        parent.send(None)
    finally:
        proc.join(30)
        if proc.is_alive():
            proc.kill()
            proc.join()

    print(json.dumps({
        "first_get_and_sum_ns": total_ns[0],
        "get_ns": median(get_ns[1:]),
        "get_and_sum_ns": median(total_ns[1:]),
        "pipe_and_sum_ns": median(pipe_ns),
        "sum_only_ns": sum_only_ns,
    }))


if __name__ == "__main__":
    main()
