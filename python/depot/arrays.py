"""The array convention shared with Java (``dev.depot.client.ArrayMetadata``; docs/PROTOCOL.md, "Array metadata").

An array object's data holds its elements in C order. Its metadata starts with a header, little-endian::

    0      4 bytes    magic b"DPA1"
    4      u8         n: length of the dtype string (1..32)
    5      n bytes    dtype, ASCII: NumPy's ``dtype.str``, e.g. "<f8", "<i4", "|u1", "|b1"
    5+n    u8         ndim (0..32)
    6+n    ndim x u64 the shape, outermost dimension first

Bytes after the header are the application's own metadata. NumPy is needed only for put_array and get_array.
"""

import struct

MAGIC = b"DPA1"
MAX_DTYPE_LENGTH = 32
MAX_NDIM = 32


def encode_array_metadata(dtype, shape, extra=b""):
    """The metadata header for an array of ``dtype`` (a type string such as ``"<f8"``) and ``shape``."""
    raw = dtype.encode("ascii")
    if not 1 <= len(raw) <= MAX_DTYPE_LENGTH or raw[:1] not in (b"<", b">", b"|", b"="):
        raise ValueError("dtype %r is not a type string such as '<f8'" % (dtype,))
    shape = tuple(int(d) for d in shape)
    if len(shape) > MAX_NDIM or any(d < 0 for d in shape):
        raise ValueError("shape %r must have at most %d non-negative dimensions" % (shape, MAX_NDIM))
    return (MAGIC + bytes([len(raw)]) + raw + bytes([len(shape)]) + struct.pack("<%dQ" % len(shape), *shape)
            + bytes(extra))


def is_array_metadata(metadata):
    return bytes(metadata[:4]) == MAGIC


def decode_array_metadata(metadata):
    """Returns ``(dtype, shape, header_length)``; every length is checked against the metadata's length."""
    metadata = bytes(metadata)
    if not is_array_metadata(metadata):
        raise ValueError("metadata of %d bytes does not start with the array magic DPA1" % len(metadata))

    def need(offset, length):
        if offset + length > len(metadata):
            raise ValueError("array header is truncated: needs %d bytes at offset %d but the metadata has %d"
                             % (length, offset, len(metadata)))

    need(4, 1)
    n = metadata[4]
    need(5, n + 1)
    dtype = metadata[5:5 + n].decode("ascii")
    ndim = metadata[5 + n]
    if ndim > MAX_NDIM:
        raise ValueError("array header has %d dimensions; at most %d" % (ndim, MAX_NDIM))
    need(6 + n, 8 * ndim)
    shape = struct.unpack_from("<%dQ" % ndim, metadata, 6 + n)
    return dtype, shape, 6 + n + 8 * ndim


def _numpy():
    try:
        import numpy
    except ImportError:
        raise ImportError("put_array and get_array need NumPy: pip install 'depot-shm[numpy]' "
                          "(the rest of depot works without it)") from None
    return numpy


def put_array(client, oid, array, metadata=b"", evict=True):
    """Stores ``array`` (copied once, into shared memory) with its dtype and shape in the metadata."""
    np = _numpy()
    array = np.asarray(array)
    if array.dtype.hasobject or array.dtype.fields is not None:
        raise TypeError("put_array stores plain numeric arrays, not dtype %s" % array.dtype)
    header = encode_array_metadata(array.dtype.str, array.shape, metadata)
    with client.create(oid, array.nbytes, header, evict) as writer:
        target = np.ndarray(array.shape, dtype=array.dtype, buffer=writer.data)
        target[...] = array
        del target
        writer.seal()


# Parsed headers by whole metadata (bytes): (dtype, shape, data size). Objects of one kind share their metadata,
# so a get_array parses each header once; the parse checks everything, and a hit only compares the data size.
_HEADERS = {}
_HEADERS_MAX = 256
_HEADER_KEY_MAX = 512


def _parsed_header(np, metadata):
    parsed = _HEADERS.get(metadata)
    if parsed is None:
        dtype, shape, _ = decode_array_metadata(metadata)
        dtype = np.dtype(dtype)
        expected = dtype.itemsize
        for d in shape:
            expected *= d
        parsed = (dtype, shape, expected)
        if len(metadata) <= _HEADER_KEY_MAX:
            if len(_HEADERS) >= _HEADERS_MAX:
                _HEADERS.clear()  # many different headers: start again rather than keep an unbounded cache
            _HEADERS[metadata] = parsed
    return parsed


def get_array(client, oid, timeout=None):
    """A read-only array over the object's shared memory, without a copy. The object stays pinned, and its
    memory mapped, until the array, and every array made from it, has been garbage-collected (the array's
    base holds the pin), even after the client is closed."""
    np = _numpy()
    # No ObjectView: its only use here would be to hand the pin to the array's buffer, which this does itself.
    raw, located, mapping = client._locate(oid, timeout)
    pin = located.pin
    try:
        metadata = located.metadata
        if metadata is None:
            metadata = mapping.read(located.metadata_offset, located.metadata_length)
        dtype, shape, expected = _parsed_header(np, metadata)
        if expected != located.size:
            raise ValueError("object %s holds %d bytes but its header says %s %s (%d bytes)"
                             % (raw.hex(), located.size, dtype.str, tuple(shape), expected))
        # The buffer's exporter holds the pin: it is released when the last array over it is collected.
        array = np.ndarray(shape, dtype=dtype, buffer=mapping.span(located.data_offset, located.size, pin, True))
    except BaseException:
        pin.release()
        raise
    return array
