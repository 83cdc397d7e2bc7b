"""Collating samples into ``Planned`` tensors (``depot.torch.filled``): the structure torch's
``default_collate`` makes, with each stacked tensor made later, in place, in shared memory."""

import collections.abc

from ._import import torch_module
from .filled import Planned

__all__ = ["plan_batch"]


def _stack(samples):
    torch = torch_module()
    first = samples[0]
    for i, s in enumerate(samples):
        if s.shape != first.shape or s.dtype != first.dtype:
            raise RuntimeError("collate: sample %d has a %s tensor of shape %s, sample 0 a %s of shape %s; stack "
                               "needs equal ones" % (i, s.dtype, tuple(s.shape), first.dtype, tuple(first.shape)))
        if s.device.type != "cpu":
            raise ValueError("collate: sample %d has a tensor on %s; depot.torch batches CPU tensors" % (i, s.device))
    return Planned(first.dtype, (len(samples),) + tuple(first.shape), lambda out: torch.stack(samples, out=out))


def _small(values):
    torch = torch_module()
    t = torch.tensor(values, dtype=torch.float64) if isinstance(values[0], float) else torch.tensor(values)
    return _copied(t)


def _copied(t):
    return Planned(t.dtype, t.shape, lambda out: out.copy_(t))


def plan_batch(samples):
    """What ``default_collate(samples)`` returns, with each tensor it would stack a ``Planned`` one: tensors and
    NumPy arrays are stacked along a new first dimension, numbers become a tensor (int64, float64, bool),
    strings and bytes a list, and tuples, lists and mappings are collated field by field (a tuple or list
    becomes a list, as there; named tuples and mappings keep their type)."""
    torch = torch_module()
    first = samples[0]
    if isinstance(first, torch.Tensor):
        return _stack(samples)
    if type(first).__module__ == "numpy":
        import numpy as np
        if getattr(first, "dtype", None) is not None and first.dtype.kind in "biufc":
            if isinstance(first, np.ndarray):
                return _stack([torch.as_tensor(s) for s in samples])
            return _copied(torch.from_numpy(np.array(samples)))
        return list(samples)
    if isinstance(first, (bool, int, float)):
        return _small(list(samples))
    if isinstance(first, (str, bytes)):
        return list(samples)
    if isinstance(first, collections.abc.Mapping):
        fields = {k: plan_batch([s[k] for s in samples]) for k in first}
        if type(first) is dict:
            return fields
        try:
            return type(first)(fields)
        except TypeError:
            return fields
    if isinstance(first, tuple) and hasattr(first, "_fields"):
        return type(first)(*(plan_batch(list(field)) for field in zip(*samples)))
    if isinstance(first, collections.abc.Sequence):
        n = len(first)
        if any(len(s) != n for s in samples):
            raise RuntimeError("collate: each sample must have %d fields, as sample 0" % n)
        return [plan_batch(list(field)) for field in zip(*samples)]
    raise TypeError("depot.torch collates tensors, NumPy arrays, numbers, strings and tuples, lists and mappings "
                    "of them; got %s" % type(first).__name__)
