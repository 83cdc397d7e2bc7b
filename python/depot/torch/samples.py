"""Samples (tensors, NumPy arrays, numbers, and tuples, lists and dicts of them) as picklable values whose
tensors travel out of band, so that ``put_object`` copies each once into shared memory and ``get_object`` gives
them back as zero-copy tensors (``depot.torch.views``).

``pack`` replaces each tensor in a nested structure by a ``TensorLeaf``; unpickling a ``TensorLeaf`` gives a
tensor again, over the buffer the unpickler hands it. Tensors inside other objects (attributes of a class of
your own) are pickled as torch pickles them: stored and read, but copied.
"""

import pickle

from ._import import torch_module
from .dtypes import dtype_name, dtype_of_name
from .views import tensor_over

__all__ = ["TensorLeaf", "pack", "rebuild_tensor"]


class TensorLeaf:
    """A CPU tensor that pickles (protocol 5) as one out-of-band buffer of its bytes, its dtype and its shape."""

    __slots__ = ("tensor",)

    def __init__(self, tensor):
        self.tensor = tensor

    def __reduce_ex__(self, protocol):
        t = self.tensor
        raw = t.reshape(-1).view(torch_module().uint8).numpy()
        buffer = pickle.PickleBuffer(raw) if protocol >= 5 else raw.tobytes()
        return rebuild_tensor, (buffer, dtype_name(t.dtype), tuple(t.shape))


def rebuild_tensor(buffer, name, shape):
    """The tensor a ``TensorLeaf`` pickled: a view over ``buffer`` (no copy) when it is a buffer of shared
    memory, as ``get_object`` hands it."""
    return tensor_over(memoryview(buffer), dtype_of_name(name), shape)


def _leaf(tensor):
    torch = torch_module()
    if tensor.device.type != "cpu" or tensor.layout != torch.strided:
        raise ValueError("depot.torch stores dense CPU tensors; a sample has one on %s (%s): return CPU tensors "
                         "from the dataset" % (tensor.device, tensor.layout))
    t = tensor.detach()
    if t.is_conj():
        t = t.resolve_conj()
    if t.is_neg():
        t = t.resolve_neg()
    return TensorLeaf(t.contiguous())


def pack(value):
    """``value`` with every tensor in its tuples, lists and dicts (nested, named tuples and dict subclasses
    kept) replaced by a ``TensorLeaf``; anything else is left as it is (NumPy arrays already pickle out of
    band)."""
    torch = torch_module()
    if isinstance(value, torch.Tensor):
        return _leaf(value)
    if isinstance(value, tuple):
        items = [pack(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    if isinstance(value, list):
        return [pack(v) for v in value]
    if isinstance(value, dict):
        packed = {k: pack(v) for k, v in value.items()}
        if type(value) is dict:
            return packed
        try:
            return type(value)(packed)
        except TypeError:
            return packed
    return value
