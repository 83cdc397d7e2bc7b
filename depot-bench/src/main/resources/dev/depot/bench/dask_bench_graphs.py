"""The graphs `depot bench dask` computes (beside dask_bench.py). Module level, so that process pools and Ray can
find the functions; they travel by value all the same (``travel_by_value``), as the functions of a user's script
(``__main__``) do."""

import sys
import time


def travel_by_value(pickler_module):
    """Makes ``pickler_module`` (cloudpickle, or Ray's copy of it) pickle this module's functions by value."""
    pickler_module.register_pickle_by_value(sys.modules[__name__])


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


def dask_compute_small(scheduler):
    import dask
    dask.compute(overhead_graph(200), scheduler=scheduler)  # warm-up: workers started, functions shipped
