"""Tensors over Depot's shared memory, and what torch's warning about non-writable buffers means for them.

A tensor made over an object's memory is a view, not a copy: its storage holds the buffer it was made from,
the buffer holds the object's pin, and the pin is released when torch frees the storage (when the tensor, and
every view, slice and reshape of it, is gone). The mapping stays mapped while any of them lives, even after the
client is closed.

Torch has no read-only tensors. Made over a read-only buffer, ``torch.frombuffer`` (and ``torch.from_numpy``
over a read-only array) warns once per process: "The given buffer is not writable, and PyTorch does not support
non-writable tensors. This means you can write to the underlying (supposedly non-writable) buffer using the
tensor." Here that means: the tensor is the sealed object's memory, which every process on the node reads. An
in-place operation on it (``t += 1``, ``t.mul_(2)``, a transform with ``inplace=True``, an optimizer stepping
it) would change the object for all of them, and a sealed object must never change. Depot suppresses the
warning for the tensors it makes, since reading them is safe; it cannot stop a write. To modify a tensor, ask
for a copy: ``get_tensor(..., copy=True)`` or ``tensor.clone()``. Out-of-place operations (``t + 1``,
``t.float()``, ``torch.stack``) make new tensors and are always safe.
"""

import math
import warnings

from ._import import torch_module

__all__ = ["NOT_WRITABLE_WARNING", "tensor_of_array", "tensor_over"]

#: the start of torch's warning about tensors over read-only memory (see the module's docstring)
NOT_WRITABLE_WARNING = "The given buffer is not writable"

#: whether this process has made a tensor over read-only memory, the one time torch warns about it
_warned = False


def tensor_over(buffer, dtype, shape, offset=0):
    """A tensor of ``dtype`` and ``shape`` over ``buffer`` (a memoryview of an object's data) from byte
    ``offset``, without a copy; its storage keeps ``buffer`` alive. A tensor with no elements owns its own
    (empty) memory."""
    torch = torch_module()
    shape = tuple(int(d) for d in shape)
    count = math.prod(shape)
    if count == 0:
        return torch.empty(shape, dtype=dtype)
    global _warned
    if _warned or not getattr(buffer, "readonly", True):
        flat = torch.frombuffer(buffer, dtype=dtype, count=count, offset=offset)
    else:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=NOT_WRITABLE_WARNING, category=UserWarning)
            flat = torch.frombuffer(buffer, dtype=dtype, count=count, offset=offset)
        _warned = True  # torch warns once per process; later calls skip the filter, ~15 % of a cache hit
    return flat.view(shape)


def tensor_of_array(array):
    """``torch.from_numpy(array)``: a tensor over the NumPy array's memory, no copy, also when the array is a
    read-only view of shared memory (without torch's warning; see the module's docstring)."""
    torch = torch_module()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The given NumPy array is not writable", category=UserWarning)
        return torch.from_numpy(array)
