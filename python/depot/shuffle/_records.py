"""The shuffle's records shared with Java: ``dev.depot.shuffle.ManifestDescriptor`` and ``MapStatusDescriptor``,
packed from the offsets in ``depot._layout``."""

import struct

from .. import _process
from .._layout import ManifestDescriptor as MD
from .._layout import MapStatusDescriptor as MS
from .._records import record_struct
from ..errors import DepotError

#: manifest: magic "DSH1", u16 version, u8 layout, u8 dtype length, u32 maps, u32 partitions, u64 creator,
#: 32 bytes dtype; its object's metadata is the shuffle id in UTF-8 (how a sweep names the other objects)
MANIFEST = record_struct(MD.LENGTH, (MD.MAGIC_OFFSET, "I"), (MD.VERSION_OFFSET, "H"), (MD.LAYOUT_OFFSET, "B"),
                         (MD.DTYPE_LENGTH_OFFSET, "B"), (MD.MAPS_OFFSET, "I"), (MD.PARTITIONS_OFFSET, "I"),
                         (MD.CREATOR_OFFSET, "Q"), (MD.DTYPE_OFFSET, "%ds" % MD.MAX_DTYPE_LENGTH))
LAYOUT_PER_SLICE = MD.LAYOUT_PER_SLICE
LAYOUT_PER_MAP = MD.LAYOUT_PER_MAP
MAX_DTYPE_LENGTH = MD.MAX_DTYPE_LENGTH
#: owner record: u64 identity of the writing process
OWNER = record_struct(MS.OWNER_LENGTH, (MS.OWNER_IDENTITY_OFFSET, "Q"))
#: status record head: magic "DSM1", u32 state, u64 writer, u32 map, u32 partitions; then P x u64 lengths,
#: u32 message length, message
STATUS_HEAD = record_struct(MS.LENGTHS_OFFSET, (MS.MAGIC_OFFSET, "I"), (MS.STATE_OFFSET, "I"),
                            (MS.WRITER_OFFSET, "Q"), (MS.MAP_OFFSET, "I"), (MS.PARTITIONS_OFFSET, "I"))
MAX_MESSAGE_LENGTH = MS.MAX_MESSAGE_LENGTH
_MESSAGE_LENGTH = struct.Struct("<I")


def _slice_lengths(partitions):
    """The status record's slice lengths, one u64 per partition from ``LENGTHS_OFFSET``."""
    return struct.Struct("<%dQ" % partitions)


def _message_length_offset(partitions):
    """Where a status record's message length lies: after its slice lengths (Java's messageLengthOffset)."""
    return MS.LENGTHS_OFFSET + _slice_lengths(partitions).size


def encode_manifest(layout, dtype, maps, partitions):
    """The manifest of a shuffle created by this process; ``layout`` is ``LAYOUT_PER_MAP`` or ``LAYOUT_PER_SLICE``,
    ``dtype`` a NumPy type string ("" for bytes) of at most ``MAX_DTYPE_LENGTH`` characters."""
    raw = dtype.encode("ascii")
    return MANIFEST.pack(MD.MAGIC, MD.VERSION, layout, len(raw), maps, partitions, _process.identity(),
                         raw.ljust(MAX_DTYPE_LENGTH, b"\0"))


def decode_manifest(data, shuffle_id, what):
    """``(layout name, dtype, maps, partitions, creator)`` of a manifest; raises DepotError naming ``what``."""
    if len(data) < MANIFEST.size or MANIFEST.unpack_from(data)[0] != MD.MAGIC:
        raise DepotError("object %s (%d bytes) is not the manifest of a shuffle (magic DSH1, %d bytes)"
                         % (what, len(data), MANIFEST.size))
    magic, version, layout, n, maps, partitions, creator, raw = MANIFEST.unpack_from(data)
    if version != MD.VERSION or layout not in (LAYOUT_PER_MAP, LAYOUT_PER_SLICE) \
            or maps <= 0 or partitions <= 0 or n > MAX_DTYPE_LENGTH:
        raise DepotError("the manifest of shuffle %s is not one this version reads: version %d (expected %d), "
                         "layout %d, %d maps, %d partitions, dtype length %d"
                         % (shuffle_id, version, MD.VERSION, layout, maps, partitions, n))
    name = "per_map" if layout == LAYOUT_PER_MAP else "per_slice"
    return name, raw[:n].decode("ascii"), maps, partitions, creator


def encode_status(map_index, committed, lengths, message):
    """The status record this process writes for map ``map_index``: committed or failed with ``message`` (cut to
    ``MAX_MESSAGE_LENGTH`` bytes of UTF-8), and the byte length of each of its slices."""
    text = message.encode("utf-8")[:MAX_MESSAGE_LENGTH]
    return (STATUS_HEAD.pack(MS.MAGIC, MS.STATE_COMMITTED if committed else MS.STATE_FAILED, _process.identity(),
                             map_index, len(lengths))
            + _slice_lengths(len(lengths)).pack(*lengths) + _MESSAGE_LENGTH.pack(len(text)) + text)


def decode_status(data, map_index, partitions):
    """``(committed, writer identity, slice lengths, message)`` of map ``map_index``'s status record; raises
    DepotError when the record is not one of that map in a shuffle of ``partitions`` partitions."""
    data = bytes(data)
    if len(data) < STATUS_HEAD.size:
        raise DepotError("the status record of map %d (%d bytes) is not a shuffle status record" % (map_index, len(data)))
    magic, state, writer, m, p = STATUS_HEAD.unpack_from(data)
    need = _message_length_offset(partitions) + _MESSAGE_LENGTH.size
    if magic != MS.MAGIC or m != map_index or p != partitions or len(data) < need \
            or state not in (MS.STATE_COMMITTED, MS.STATE_FAILED):
        raise DepotError("the status record of map %d is inconsistent: magic %r, map %d, %d partitions (expected %d),"
                         " state %d, %d bytes" % (map_index, data[:4], m, p, partitions, state, len(data)))
    lengths = _slice_lengths(partitions).unpack_from(data, MS.LENGTHS_OFFSET)
    (n,) = _MESSAGE_LENGTH.unpack_from(data, _message_length_offset(partitions))
    if need + n > len(data):
        raise DepotError("the status record of map %d has a message of %d bytes but only %d follow"
                         % (map_index, n, len(data) - need))
    return state == MS.STATE_COMMITTED, writer, lengths, data[need:need + n].decode("utf-8", "replace")
