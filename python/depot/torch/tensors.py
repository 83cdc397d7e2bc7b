"""CPU tensors as Depot objects in the array format NumPy and Java read (``depot.arrays``)."""

import math

from ..arrays import decode_array_metadata, encode_array_metadata
from ._import import torch_module
from .dtypes import array_dtype, tensor_dtype
from .views import tensor_over

__all__ = ["get_tensor", "put_tensor"]


def _storable(tensor):
    """``tensor`` detached, with its lazy conjugate or negation applied; TypeError/ValueError when it cannot be
    stored (not a tensor, not on the CPU, not strided)."""
    torch = torch_module()
    if not isinstance(tensor, torch.Tensor):
        raise TypeError("put_tensor stores a torch.Tensor, got %s" % type(tensor).__name__)
    if tensor.device.type != "cpu":
        raise ValueError("put_tensor stores CPU tensors; this one is on %s: move it with .cpu() first" % tensor.device)
    if tensor.layout != torch.strided:
        raise ValueError("put_tensor stores dense tensors, not %s ones: use .to_dense() first" % tensor.layout)
    t = tensor.detach()
    if t.is_conj():
        t = t.resolve_conj()
    if t.is_neg():
        t = t.resolve_neg()
    return t


def put_tensor(client, oid, tensor, metadata=b"", evict=True, keep=False):
    """Stores a CPU tensor as object ``oid``: its elements in C order (copied once, straight into shared
    memory, also from a non-contiguous tensor), its dtype and shape in the array header.

    Parameters
    ----------
    client : depot.Client
    oid : ObjectId or bytes
    tensor : torch.Tensor
        A dense CPU tensor of any dtype; one that requires grad is stored without its graph.
    metadata : bytes
        The application's own metadata, after the array header (and the dtype tag, for dtypes NumPy lacks).
    evict, keep : bool
        As for ``Client.create``.

    Examples
    --------
    >>> put_tensor(client, oid, torch.arange(6.0).reshape(2, 3))    # doctest: +SKIP
    >>> client.get_array(oid)                                        # doctest: +SKIP
    array([[0., 1., 2.],
           [3., 4., 5.]])
    """
    t = _storable(tensor)
    type_string, tag = array_dtype(t.dtype)
    header = encode_array_metadata(type_string, t.shape, tag + bytes(metadata))
    nbytes = t.numel() * t.element_size()
    with client.create(oid, nbytes, header, evict=evict, keep=keep) as writer:
        if nbytes:
            target = tensor_over(writer.data, t.dtype, t.shape)
            target.copy_(t)
            del target
        writer.seal()


def get_tensor(client, oid, timeout=None, copy=False):
    """The tensor stored as object ``oid`` (by ``put_tensor``, NumPy's ``put_array`` or Java), waiting up to
    ``timeout`` seconds for it (None: forever).

    Without ``copy``, a zero-copy view of the object's shared memory: the object stays pinned while the tensor,
    or any tensor viewing its storage (slices, reshapes), is alive, and is released when torch frees the
    storage. Never modify it in place: it is the memory every process reads (see ``depot.torch.views``).

    Parameters
    ----------
    copy : bool
        A private, writable copy instead (the object is released at once); the same as ``.clone()`` of the
        view.

    Returns
    -------
    torch.Tensor
        ``tensor.data_ptr()`` is the address of the object's data in this process's mapping of the store.

    Raises
    ------
    ObjectMissingError
        No such object within ``timeout``.
    ValueError
        The object is not an array, its header disagrees with its size, or torch has no such dtype.
    """
    view = client.get(oid, timeout)
    try:
        metadata = view.metadata
        type_string, shape, header_length = decode_array_metadata(metadata)
        dtype, _ = tensor_dtype(type_string, metadata[header_length:])
        expected = dtype.itemsize * math.prod(shape)
        if expected != view.size:
            raise ValueError("object %s holds %d bytes but its header says %s %s (%d bytes)"
                             % (view.id, view.size, type_string, tuple(shape), expected))
        data = view.data
    finally:
        view.release()  # the pin passes to ``data``'s exporter, which the tensor's storage keeps alive
    tensor = tensor_over(data, dtype, shape)
    return tensor.clone() if copy else tensor
