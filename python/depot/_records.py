"""Fixed-size little-endian records packed with ``struct``, their fields placed by ``_layout``'s offsets.

A format string written by hand is a second copy of a layout. ``record_struct`` takes each field's offset
from the checked table and only its width from a ``struct`` code, and refuses fields that do not follow each
other exactly, so a record packed here has the layout the Java descriptor draws.
"""

import struct

__all__ = ["record_struct"]


def record_struct(length, *fields):
    """A little-endian ``struct.Struct`` of ``fields``, each ``(offset, code)`` in order.

    Parameters
    ----------
    length : int or None
        The record's length from the layout table (None: it ends with the last field).
    *fields : tuple of (int, str)
        Each field's offset (a ``_layout`` constant) and ``struct`` code (``"I"``, ``"Q"``, ``"32s"``).

    Returns
    -------
    struct.Struct

    Raises
    ------
    ValueError
        When a field does not start where the one before it ends, or the fields do not fill ``length``.
    """
    codes = "<"
    for offset, code in fields:
        end = struct.calcsize(codes)
        if offset != end:
            raise ValueError("field %r of the record is at offset %d, but the fields before it end at %d"
                             % (code, offset, end))
        codes += code
    record = struct.Struct(codes)
    if length is not None and record.size != length:
        raise ValueError("the fields of the record take %d bytes; its layout says %d" % (record.size, length))
    return record
