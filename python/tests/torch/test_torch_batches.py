"""Batches by id: workers collate into Depot, the trainer maps each batch and the object goes with it."""

import collections
import gc
import os
import sys
import time
import uuid

import pytest

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")

import depot  # noqa: E402
from depot.torch import BatchLoader, BatchWriter, SharedCache, read_batch  # noqa: E402
from depot.torch.batches import ID_TAG  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from torch_datasets import Recorded, check_batch  # noqa: E402

Pair = collections.namedtuple("Pair", "x y")


class Mixed(torch.utils.data.Dataset):
    """Every kind of field default_collate handles."""

    def __len__(self):
        return 10

    def __getitem__(self, i):
        return {"t": torch.arange(6, dtype=torch.int16).reshape(2, 3) + i, "a": np.full(3, i, dtype=np.float32),
                "n": i, "f": i / 2, "b": i % 2 == 0, "s": "s%d" % i, "np": np.float32(i),
                "pair": Pair(torch.tensor([i, i]), i), "list": [i, torch.zeros(1)], "empty": torch.zeros(0, 3)}


def same(a, b):
    if isinstance(a, torch.Tensor):
        assert isinstance(b, torch.Tensor) and a.dtype == b.dtype and torch.equal(a, b), (a, b)
    elif isinstance(a, dict):
        assert type(a) is type(b) and a.keys() == b.keys()
        for k in a:
            same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            same(x, y)
    else:
        assert a == b


def objects(client):
    return {bytes(o.id) for o in client.list()}


def test_batches_are_what_default_collate_makes(shared_daemon):
    plain = list(torch.utils.data.DataLoader(Mixed(), batch_size=4))
    with depot.connect(shared_daemon.dir) as c:
        before = objects(c)
        got = list(BatchLoader(Mixed(), dir=shared_daemon.dir, batch_size=4, num_workers=2))
        assert len(got) == len(plain) == 3
        for a, b in zip(plain, got):
            same(a, b)
        base = c._mapping.base
        assert base <= got[0]["t"].data_ptr() < base + c.file_length  # mapped, not copied
        del got, a, b
        gc.collect()
        assert objects(c) == before  # each batch object went with its last tensor


def test_a_worker_hands_over_only_the_id(shared_daemon):
    writer = BatchWriter(shared_daemon.dir)
    ref = writer([(torch.ones(256, 256), 1), (torch.zeros(256, 256), 2)])
    assert len(__import__("pickle").dumps(ref)) < 200 and ref.nbytes > 2 * 256 * 256 * 4
    with depot.connect(shared_daemon.dir) as c:
        images, labels = read_batch(c, ref)
        assert images.shape == (2, 256, 256) and labels.tolist() == [1, 2] and images[0, 0, 0] == 1
        assert not c.contains(ref.oid)  # deleted; its memory goes with the tensors
        with pytest.raises(depot.ObjectMissingError, match="evicted"):
            read_batch(c, ref)


def test_an_epoch_left_early_leaves_no_batch_behind(shared_daemon, tmp_path):
    loader = BatchLoader(Recorded(64, 64, str(tmp_path / "log")), dir=shared_daemon.dir, batch_size=2,
                         num_workers=2, prefetch_factor=4)
    with depot.connect(shared_daemon.dir) as c:
        before = objects(c)
        for i, batch in enumerate(loader):
            if i == 2:
                break
        del batch
        loader_iter = None  # noqa: F841
        gc.collect()
        assert objects(c) == before


def children(exclude):
    """The pids of this process's child processes, but those in ``exclude``."""
    kids = set()
    for task in os.listdir("/proc/self/task"):
        try:
            with open("/proc/self/task/%s/children" % task) as f:
                kids.update(int(p) for p in f.read().split())
        except OSError:
            pass
    return kids - set(exclude)


def settled(client, prefix=None, deadline=30):
    """Waits (up to ``deadline`` seconds) until the store holds no object whose id starts with ``prefix``, no
    object that is not sealed (a claim or batch of a stopped worker, which the daemon aborts) and no pin;
    returns what is left when it does not."""
    end = time.monotonic() + deadline
    while True:
        infos = client.list()
        left = ([bytes(o.id).hex() for o in infos if prefix and bytes(o.id).startswith(prefix)],
                [(bytes(o.id).hex(), o.state) for o in infos if o.state != "sealed"], client.stat().pinned_bytes)
        if left == ([], [], 0) or time.monotonic() > end:
            return left
        time.sleep(0.05)


def test_persistent_workers_left_early_leave_no_batch_pin_or_process(shared_daemon, tmp_path):
    cached = SharedCache(Recorded(64, 64, str(tmp_path / "log")), dir=shared_daemon.dir, namespace=uuid.uuid4().hex)
    loader = BatchLoader(cached, dir=shared_daemon.dir, batch_size=2, num_workers=2, prefetch_factor=4,
                         persistent_workers=True)
    others = children([])  # the daemon, and the processes of the session's other fixtures
    with depot.connect(shared_daemon.dir) as c:
        assert sorted(s for b in loader for s in check_batch(b)) == list(range(64))
        assert len(children(others)) == 2  # a whole epoch: the workers stay for the next
        for i, batch in enumerate(loader):
            check_batch(batch)
            if i == 2:
                break
        del batch
        gc.collect()
        assert children(others) == set(), "the workers of an epoch left early are stopped"
        assert settled(c, loader.writer.prefix) == ([], [], 0)
        assert sorted(s for b in loader for s in check_batch(b)) == list(range(64))  # with new workers
        epoch = iter(loader)
        check_batch(next(epoch))
        del loader, epoch  # mid-epoch, the loader and its iterator dropped
        gc.collect()
        assert children(others) == set()
        assert settled(c, ID_TAG) == ([], [], 0)
    cached.clear()


def test_a_dataloader_of_persistent_workers_over_the_cache_deleted_mid_epoch_leaves_no_pin_or_process(
        shared_daemon, tmp_path):
    cached = SharedCache(Recorded(64, 64, str(tmp_path / "log")), dir=shared_daemon.dir, namespace=uuid.uuid4().hex)
    loader = torch.utils.data.DataLoader(cached, batch_size=2, num_workers=2, prefetch_factor=4,
                                         persistent_workers=True)
    others = children([])  # the daemon, and the processes of the session's other fixtures
    with depot.connect(shared_daemon.dir) as c:
        for i, batch in enumerate(loader):
            check_batch(batch)
            if i == 2:
                break
        assert len(children(others)) == 2
        del loader, batch
        gc.collect()
        assert children(others) == set()
        assert settled(c) == ([], [], 0)  # no claim of a stopped worker left, no pin
    cached.clear()
