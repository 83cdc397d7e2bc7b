"""Batches by id: DataLoader workers collate each batch straight into Depot and hand the trainer only its id.

``BatchWriter`` is the ``collate_fn``: in the worker it collates as ``default_collate`` does, each stacked
tensor made in place in a new Depot object (``depot.torch.filled``), and returns a ``BatchRef`` (the object's
id), which is all that crosses the worker's queue. ``read_batch`` maps the batch in the trainer (its tensors
views of the object, no copy) and deletes the object: its memory goes when the last of those tensors does.
``BatchLoader`` is a DataLoader that does both.
"""

import itertools
import os

from .._task_context import client_for
from ..client import default_directory
from ..errors import ObjectExistsError, ObjectMissingError
from ..ids import ObjectId
from ..pickling import get_object
from ._import import torch_module
from ._workers import settle_worker
from .collate import plan_batch
from .filled import put_filled

__all__ = ["BatchLoader", "BatchRef", "BatchWriter", "read_batch"]

#: the first bytes of every batch's id; then the writer's token (8 bytes), the writing process's pid (4) and a
#: number (4) counting that process's batches
ID_TAG = b"DTB1"
TOKEN_LENGTH = 8


class BatchRef:
    """A batch in Depot: the object's id and its size in bytes. What a ``BatchWriter`` returns to the
    DataLoader, and all that crosses the worker's queue."""

    __slots__ = ("oid", "nbytes")

    def __init__(self, oid, nbytes):
        self.oid = bytes(oid)
        self.nbytes = nbytes

    def __reduce__(self):
        return BatchRef, (self.oid, self.nbytes)

    def __repr__(self):
        return "BatchRef(%s, %d bytes)" % (ObjectId(self.oid).hex()[:16], self.nbytes)


class BatchWriter:
    """A DataLoader ``collate_fn`` that writes each batch into the store in ``dir`` and returns its
    ``BatchRef``. Picklable: each worker process writes with its own client.

    Parameters
    ----------
    dir : str, optional
        The store's directory (default ``depot.default_directory()``); a daemon must serve it.
    token : bytes, optional
        8 bytes that start the ids of this writer's batches after the tag (default: random), by which
        ``discard`` finds the batches no trainer read.
    """

    def __init__(self, dir=None, token=None):
        self.directory = os.path.abspath(dir if dir is not None else default_directory())
        self.token = bytes(token) if token is not None else os.urandom(TOKEN_LENGTH)
        if len(self.token) != TOKEN_LENGTH:
            raise ValueError("a BatchWriter's token has %d bytes, not %d" % (len(self.token), TOKEN_LENGTH))
        self._numbers = itertools.count()

    def __getstate__(self):
        return {"directory": self.directory, "token": self.token}

    def __setstate__(self, state):
        self.directory = state["directory"]
        self.token = state["token"]
        self._numbers = itertools.count()

    @property
    def prefix(self):
        """The first bytes of the ids of this writer's batches."""
        return ID_TAG + self.token

    def __call__(self, samples):
        settle_worker()
        structure = plan_batch(samples)
        client = client_for(self.directory)
        pid = (os.getpid() & 0xFFFFFFFF).to_bytes(4, "little")
        while True:
            oid = self.prefix + pid + (next(self._numbers) & 0xFFFFFFFF).to_bytes(4, "little")
            try:
                return BatchRef(oid, put_filled(client, oid, structure))
            except ObjectExistsError:
                continue  # left by an earlier process with this pid

    def discard(self, client=None):
        """Deletes this writer's batches no trainer read (after the DataLoader's workers stopped); returns how
        many."""
        client = client if client is not None else client_for(self.directory)
        prefix = self.prefix
        n = 0
        for info in client.list():
            if bytes(info.id).startswith(prefix) and info.state == "sealed" and client.delete(info.id):
                n += 1
        return n


def read_batch(client, ref):
    """The batch ``ref`` names, its tensors zero-copy views of the object (read-only by contract:
    ``depot.torch.views``), and deletes the object: its memory is freed when the last of its tensors is.
    Raises ObjectMissingError (saying why) when the batch is not in the store."""
    try:
        batch = get_object(client, ref.oid, timeout=0)
    except ObjectMissingError:
        raise ObjectMissingError("batch %s is not in the store at %s: the store evicted it before the trainer read "
                                 "it (give the store more room than the cache's limit plus num_workers x "
                                 "prefetch_factor batches) or it was read already" % (ref, client.directory)) from None
    client.delete(ref.oid)
    return batch


class BatchLoader:
    """A ``torch.utils.data.DataLoader`` whose workers write each batch into Depot and whose iterator yields
    it mapped, without a copy: the batches are what ``default_collate`` would make, their tensors views of
    shared memory.

    Parameters
    ----------
    dataset : torch.utils.data.Dataset
    dir : str, optional
        The store's directory (default ``depot.default_directory()``); a daemon must serve it.
    **kwargs
        The DataLoader's arguments (``batch_size``, ``shuffle``, ``num_workers``, ``sampler``, ...), except
        ``collate_fn``. ``pin_memory`` is left to the caller: pinning copies each batch into page-locked memory.

    Examples
    --------
    >>> for images, labels in depot.torch.BatchLoader(dataset, batch_size=64, num_workers=4):  # doctest: +SKIP
    ...     loss = model(images).loss(labels)
    """

    def __init__(self, dataset, dir=None, **kwargs):
        if "collate_fn" in kwargs:
            raise TypeError("BatchLoader collates itself; use a DataLoader with collate_fn=BatchWriter() to combine")
        self.directory = os.path.abspath(dir if dir is not None else default_directory())
        self.writer = BatchWriter(self.directory)
        self.loader = torch_module().utils.data.DataLoader(dataset, collate_fn=self.writer, **kwargs)

    @property
    def dataset(self):
        return self.loader.dataset

    def __len__(self):
        return len(self.loader)

    def __iter__(self):
        client = client_for(self.directory)
        refs = iter(self.loader)
        finished = False
        try:
            for ref in refs:
                yield read_batch(client, ref)
            finished = True
        finally:
            if not finished and self.loader.persistent_workers:
                # Left early: the workers may still be writing batches of this epoch, which the next epoch's
                # iterator would drop unread. The DataLoader keeps persistent workers in its iterator: without
                # it they stop, and the next epoch starts new ones.
                self.loader._iterator = None
            del refs  # the DataLoader's iterator stops its workers when it goes
            if not (finished and self.loader.persistent_workers):
                self.writer.discard(client)  # the workers are stopped: no batch of theirs is being written
