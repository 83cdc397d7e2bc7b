"""Torch dtypes in Depot's array format (``depot.arrays``, docs/PROTOCOL.md "Array metadata").

A tensor is stored under the NumPy type string of its dtype (``torch.float32`` as ``"<f4"``), so NumPy's
``get_array`` and Java's ``ArrayMetadata`` read it. A dtype NumPy has no type for (``bfloat16``, the float8
types) is stored as the unsigned integer of its size, and the application metadata after the array header
starts with a tag naming the torch dtype::

    0      4 bytes    magic b"DPT1"
    4      u8         n: length of the name (1..32)
    5      n bytes    the torch dtype's name, ASCII ("bfloat16")

``get_array`` then reads the raw bits (``uint16`` for ``bfloat16``); ``get_tensor`` reads the tag.
"""

from ._import import torch_module

__all__ = ["TAG", "array_dtype", "tensor_dtype", "dtype_name", "dtype_of_name"]

TAG = b"DPT1"
MAX_NAME_LENGTH = 32

# torch dtype name -> NumPy type string (little-endian: the only byte order torch has)
_TYPE_STRINGS = {
    "bool": "|b1", "uint8": "|u1", "int8": "|i1", "int16": "<i2", "int32": "<i4", "int64": "<i8",
    "uint16": "<u2", "uint32": "<u4", "uint64": "<u8", "float16": "<f2", "float32": "<f4", "float64": "<f8",
    "complex64": "<c8", "complex128": "<c16",
}
_NAMES = {v: k for k, v in _TYPE_STRINGS.items()}
_UNSIGNED_OF_SIZE = {1: "|u1", 2: "<u2", 4: "<u4", 8: "<u8"}


def dtype_name(dtype):
    """``"float32"`` for ``torch.float32``."""
    return str(dtype).rpartition(".")[2]


def dtype_of_name(name):
    """The torch dtype named ``name`` (``"bfloat16"``); ValueError when torch has none of that name."""
    torch = torch_module()
    dtype = getattr(torch, name, None) if name.isidentifier() else None
    if not isinstance(dtype, torch.dtype):
        raise ValueError("%r is not a torch dtype" % (name,))
    return dtype


def array_dtype(dtype):
    """``(type string, tag)``: the array format's type string for the torch ``dtype``, and the bytes that
    start the application metadata (empty unless NumPy has no such type)."""
    name = dtype_name(dtype)
    found = _TYPE_STRINGS.get(name)
    if found is not None:
        return found, b""
    size = dtype.itemsize
    if dtype.is_complex or size not in _UNSIGNED_OF_SIZE:
        raise TypeError("depot.torch cannot store tensors of dtype %s" % dtype)
    raw = name.encode("ascii")
    return _UNSIGNED_OF_SIZE[size], TAG + bytes([len(raw)]) + raw


def tensor_dtype(type_string, extra):
    """``(torch dtype, length of the tag)`` of an array whose header has ``type_string`` and whose application
    metadata is ``extra``. Raises ValueError for type strings torch has no dtype for (big-endian ones, say)."""
    if bytes(extra[:len(TAG)]) == TAG:
        if len(extra) < len(TAG) + 1:
            raise ValueError("torch dtype tag of %d bytes is truncated: it needs %d" % (len(extra), len(TAG) + 1))
        n = extra[len(TAG)]
        end = len(TAG) + 1 + n
        if not 1 <= n <= MAX_NAME_LENGTH or end > len(extra):
            raise ValueError("torch dtype tag names %d bytes at offset %d but the metadata after the header has %d"
                             % (n, len(TAG) + 1, len(extra)))
        dtype = dtype_of_name(bytes(extra[len(TAG) + 1:end]).decode("ascii"))
        if array_dtype(dtype)[0] != type_string:
            raise ValueError("torch dtype tag says %s but the array's type string is %r" % (dtype, type_string))
        return dtype, end
    name = _NAMES.get(type_string.replace("=", "<"))
    if name is None:
        raise ValueError("the array type %r has no torch dtype (torch has little-endian numbers and bool only); "
                         "read it with get_array" % (type_string,))
    return dtype_of_name(name), 0
