"""The baseline schedulers `depot bench dask` starts itself (beside dask_bench.py): LocalCluster's and
dask-on-ray's, each a context manager that yields a Dask scheduler."""

import contextlib
import time


class LocalClusterGet:
    """A LocalCluster's ``Client.get`` as a Dask scheduler, with ``settle``: wait until its scheduler has
    forgotten the last compute's tasks. It forgets them a moment after ``get`` returns (the release is
    asynchronous), and a compute of the same keys before then got the results it still held: probes here took 3 ms
    instead of 1.1 s."""

    def __init__(self, client):
        self._client = client

    def __call__(self, dsk, keys, **kwargs):
        return self._client.get(dsk, keys, **kwargs)

    def settle(self):
        deadline = time.monotonic() + LOCAL_CLUSTER_SETTLE_TIMEOUT_S
        while self._client.run_on_scheduler(_scheduler_task_count) and time.monotonic() < deadline:
            time.sleep(0.01)


LOCAL_CLUSTER_SETTLE_TIMEOUT_S = 30


def _scheduler_task_count(dask_scheduler):
    return len(dask_scheduler.tasks)


@contextlib.contextmanager
def local_cluster():
    import distributed
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    client = distributed.Client(cluster)
    try:
        yield LocalClusterGet(client)
    finally:
        client.close()
        cluster.close()


def settle(scheduler):
    """Outside the timed runs, after each compute: a scheduler that keeps results for a moment forgets them."""
    if isinstance(scheduler, LocalClusterGet):
        scheduler.settle()


@contextlib.contextmanager
def dask_on_ray():
    import ray
    from ray.util.dask import ray_dask_get
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield ray_dask_get
    finally:
        ray.shutdown()
