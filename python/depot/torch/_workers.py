"""What a DataLoader worker does once, the first time depot.torch runs in it: it freezes the objects it
inherited from the training process out of the garbage collector's reach.

A DataLoader worker is forked from its training process and shares that process's heap (torch, the model, the
dataset) copy-on-write. A full collection in the worker writes to the header of every object it tracks, so each
page of the inherited heap is copied into the worker: seconds of page copies in one pause, and the trainer's
heap held once more per worker. ``gc.freeze()`` moves the inherited objects into the permanent generation (it
relinks the lists' ends, touching no other object), which later collections skip; the worker's own objects are
collected as before. Python's documentation of ``gc.freeze`` recommends this for forked workers. Inherited
objects that become cyclic garbage in the worker are not freed: the worker lives as long as its DataLoader.
"""

import gc
import os

from ._import import torch_module

__all__ = ["settle_worker"]

#: the pid of the worker process this module settled (a fork inherits the parent's value, which then differs)
_settled_pid = None


def settle_worker():
    """In a DataLoader worker process, freezes the objects inherited from its parent, once per process; outside
    a worker (the training process itself, ``num_workers=0``), does nothing. Returns True when it froze."""
    global _settled_pid
    pid = os.getpid()
    if _settled_pid == pid:
        return False
    _settled_pid = pid
    if torch_module().utils.data.get_worker_info() is None:
        return False
    gc.freeze()
    return True
