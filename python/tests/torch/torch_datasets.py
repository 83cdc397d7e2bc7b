"""Datasets the depot.torch tests read, in this process and in children (which put this folder on sys.path)."""

import os
import sys
import time

import numpy as np
import torch


class Recorded(torch.utils.data.Dataset):
    """Sample ``i``: ``(tensor of shape (side, side) filled with i, {"label": i, "array": int64 NumPy [i, -i]})``.

    Each decode appends ``"pid index"`` to ``log`` (one write of a short line with O_APPEND: whole lines from
    every process). Decoding ``hang_on`` prints ``decoding INDEX PID`` and never ends."""

    def __init__(self, n, side, log, hang_on=None):
        self.n = n
        self.side = side
        self.log = log
        self.hang_on = hang_on

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        fd = os.open(self.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, b"%d %d\n" % (os.getpid(), i))
        finally:
            os.close(fd)
        if i == self.hang_on:
            print("decoding %d %d" % (i, os.getpid()), flush=True)
            while True:
                time.sleep(60)
        return (torch.full((self.side, self.side), float(i)), {"label": i, "array": np.array([i, -i])})


def decodes(log):
    """``[(pid, index)]`` of every decode recorded in ``log``."""
    if not os.path.exists(log):
        return []
    with open(log) as f:
        return [tuple(int(x) for x in line.split()) for line in f]


def check_batch(batch):
    """Asserts a collated batch of ``Recorded`` samples is right; returns its indices."""
    images, fields = batch
    labels = fields["label"]
    for image, label in zip(images, labels):
        assert bool((image == float(label)).all()), "sample %d holds %r" % (int(label), image.flatten()[:4])
    assert bool((fields["array"][:, 0] == labels).all()) and bool((fields["array"][:, 1] == -labels).all())
    return [int(x) for x in labels]


def run_loader(directory, namespace, n, side, log, epochs, shuffle_seed):
    """A training process: SharedCache over Recorded, DataLoader with 2 workers, ``epochs`` epochs; prints
    ``epoch K INDICES`` after each."""
    from depot.torch import SharedCache
    cached = SharedCache(Recorded(n, side, log), dir=directory, namespace=namespace)
    loader = torch.utils.data.DataLoader(cached, batch_size=4, num_workers=2, shuffle=True,
                                         generator=torch.Generator().manual_seed(shuffle_seed))
    for epoch in range(epochs):
        seen = []
        for batch in loader:
            seen += check_batch(batch)
        print("epoch %d %d" % (epoch, len(set(seen))), flush=True)


if __name__ == "__main__":
    run_loader(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], int(sys.argv[6]),
               int(sys.argv[7]))
