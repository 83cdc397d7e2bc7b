"""depot.torch.SharedCache: samples decoded once for every DataLoader worker of every process on the node."""

import gc
import os
import platform
import signal
import subprocess
import sys
import uuid
import warnings

import pytest

from conftest import Child, Daemon, java_command

torch = pytest.importorskip("torch")
pytest.importorskip("numpy")

import depot  # noqa: E402
from depot.torch import SharedCache  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from torch_datasets import Recorded, check_batch, decodes  # noqa: E402


def child(*args):
    return Child([sys.executable, os.path.join(HERE, "torch_datasets.py")] + [str(a) for a in args])


def in_store(client, tensor):
    base = client._mapping.base
    return base <= tensor.data_ptr() < base + client.file_length


def test_a_sample_is_decoded_once_and_read_back_as_views_of_the_store(shared_daemon, tmp_path):
    log = str(tmp_path / "decodes")
    cached = SharedCache(Recorded(4, 8, log), dir=shared_daemon.dir, namespace=uuid.uuid4().hex)
    first = cached[2]
    again = cached[2]
    assert decodes(log) == [(os.getpid(), 2)]
    image, fields = again
    assert torch.equal(image, first[0]) and fields["label"] == 2 and fields["array"].tolist() == [2, -2]
    with depot.connect(shared_daemon.dir) as c:
        assert in_store(c, image)  # a view of the one copy, not a copy
        assert in_store(c, first[0])  # the decoding worker, too, returns the stored copy
    assert not fields["array"].flags.writeable
    cached.clear()


def test_the_c_heap_gives_its_free_pages_back_where_the_c_library_can():
    from depot.torch._heap import release_free_heap
    assert release_free_heap() == (platform.libc_ver()[0] == "glibc")


def test_the_default_namespace_is_the_same_for_equal_datasets_and_differs_otherwise(shared_daemon, tmp_path):
    log = str(tmp_path / "decodes")
    a = SharedCache(Recorded(4, 8, log), dir=shared_daemon.dir)
    assert a.namespace == SharedCache(Recorded(4, 8, log), dir=shared_daemon.dir).namespace
    assert a.namespace != SharedCache(Recorded(5, 8, log), dir=shared_daemon.dir).namespace


def test_two_processes_with_two_workers_each_decode_every_sample_once(shared_daemon, tmp_path):
    log, n = str(tmp_path / "decodes"), 24
    namespace = uuid.uuid4().hex
    with child(shared_daemon.dir, namespace, n, 16, log, 2, 1) as a, \
            child(shared_daemon.dir, namespace, n, 16, log, 2, 2) as b:
        for p in (a, b):
            assert p.await_line("epoch 0", timeout=120) == "epoch 0 %d" % n
            assert p.await_line("epoch 1", timeout=120) == "epoch 1 %d" % n
            assert p.proc.wait(timeout=60) == 0
    indices = sorted(i for _, i in decodes(log))
    assert indices == list(range(n)), "each sample decoded once across 2 processes x 2 workers x 2 epochs"
    assert len({pid for pid, _ in decodes(log)}) >= 2
    SharedCache(Recorded(n, 16, log), dir=shared_daemon.dir, namespace=namespace).clear()


HANGING = """
import sys, torch
sys.path.insert(0, sys.argv[1])
from torch_datasets import Recorded
from depot.torch import SharedCache
cached = SharedCache(Recorded(24, 16, sys.argv[4], hang_on=3), dir=sys.argv[2], namespace=sys.argv[3])
for batch in torch.utils.data.DataLoader(cached, batch_size=4, num_workers=1):
    pass
"""


def test_a_worker_killed_while_decoding_leaves_the_sample_to_another_process(shared_daemon, tmp_path):
    log, namespace = str(tmp_path / "decodes"), uuid.uuid4().hex
    with Child([sys.executable, "-c", HANGING, HERE, shared_daemon.dir, namespace, log]) as hanging:
        worker = int(hanging.await_line("decoding 3", timeout=120).split()[2])
        with child(shared_daemon.dir, namespace, 24, 16, log, 1, 3) as other:
            os.kill(worker, signal.SIGKILL)
            assert other.await_line("epoch 0", timeout=120) == "epoch 0 24"
            assert other.proc.wait(timeout=60) == 0
    got = decodes(log)
    assert sorted(i for _, i in got if i != 3) == [i for i in range(24) if i != 3]
    assert [pid for pid, i in got if i == 3][0] == worker and len([i for _, i in got if i == 3]) == 2
    SharedCache(Recorded(24, 16, log), dir=shared_daemon.dir, namespace=namespace).clear()


def epoch(cached, workers=2):
    seen = []
    for batch in torch.utils.data.DataLoader(cached, batch_size=4, num_workers=workers):
        seen += check_batch(batch)
    return seen


def test_dataloader_workers_freeze_what_they_inherit_and_the_training_process_does_not(shared_daemon, tmp_path):
    cached = SharedCache(Recorded(4, 8, str(tmp_path / "decodes")), dir=shared_daemon.dir,
                         namespace=uuid.uuid4().hex)
    frozen_here = gc.get_freeze_count()
    cached[0]
    assert gc.get_freeze_count() == frozen_here
    loader = torch.utils.data.DataLoader(cached, batch_size=2, num_workers=2,
                                         collate_fn=lambda samples: gc.get_freeze_count())
    counts = list(loader)
    assert len(counts) == 2 and all(count > frozen_here for count in counts)
    cached.clear()


def test_a_cache_larger_than_the_store_evicts_and_stays_correct(shared_daemon, tmp_path):
    log = str(tmp_path / "decodes")
    n, side = 40, 724  # 40 samples of 2 MiB in a 64 MiB store, three times
    cached = SharedCache(Recorded(n, side, log), dir=shared_daemon.dir, namespace=uuid.uuid4().hex)
    with depot.connect(shared_daemon.dir) as c:
        evicted = c.stat().eviction_count
        for _ in range(3):
            assert epoch(cached) == list(range(n))
        assert c.stat().eviction_count > evicted
    assert len(decodes(log)) > n  # some were evicted and decoded again
    cached.clear()


@pytest.fixture
def spill_daemon(store_dir):
    cmd = java_command("dev.depot.server.DaemonMain", "--dir", store_dir, "--capacity", 32 << 20,
                       "--spill-dir", os.path.join(store_dir, "spill"))
    d = Daemon(store_dir, Child(cmd))
    try:
        d.child.await_line("depot: serving", timeout=60)
        yield d
    finally:
        d.stop()


def test_kept_samples_spill_when_the_store_is_full_and_are_never_decoded_again(spill_daemon, tmp_path):
    log = str(tmp_path / "decodes")
    n, side = 24, 724  # 24 samples of 2 MiB in a 32 MiB store
    cached = SharedCache(Recorded(n, side, log), dir=spill_daemon.dir, namespace="kept", keep=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        assert epoch(cached) == list(range(n))
        assert epoch(cached) == list(range(n))
    assert sorted(i for _, i in decodes(log)) == list(range(n))
    with depot.connect(spill_daemon.dir) as c:
        stats = c.stat()
        assert stats.spill_count > 0 and stats.restore_count > 0, stats


def test_kept_samples_that_do_not_fit_are_returned_uncached_with_a_warning(shared_daemon, tmp_path):
    log = str(tmp_path / "decodes")
    cached = SharedCache(Recorded(40, 724, log), dir=shared_daemon.dir, namespace=uuid.uuid4().hex, keep=True)
    with pytest.warns(RuntimeWarning, match="uncached"):
        assert epoch(cached, workers=0) == list(range(40))
    cached.clear()
