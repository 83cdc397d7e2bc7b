"""A graph whose tasks log that they ran (for the cache tests; imported by their child processes too)."""

import time

import dask
import numpy as np


def _costly(i, log, delay):
    time.sleep(delay)
    with open(log, "a") as f:
        f.write("%d\n" % i)
    return np.full(50000, float(i))


def _graph(log, delay=0.0):
    parts = [dask.delayed(_costly)(i, log, delay, dask_key_name="part-%d" % i) for i in range(4)]
    # pure: keys are tokens of the inputs, the same in every run and process (impure calls get random keys)
    sums = [dask.delayed(np.sum, pure=True)(p) for p in parts]
    return dask.delayed(sum, pure=True)(sums, dask_key_name="total")
