"""The control protocol's frames and message bodies (docs/PROTOCOL.md; Java: FrameDescriptor, MessageDescriptor).

Every integer is little-endian. Each ``struct.Struct`` below is one message body, its fields in wire order.
"""

import struct

VERSION_MAJOR = 2
VERSION_MINOR = 0

# Frame header: length of the rest (u32), type (u16), flags (u16), request id (u64).
HEADER = struct.Struct("<IHHQ")
HEADER_LENGTH = HEADER.size
MIN_LENGTH = HEADER_LENGTH - 4
MAX_BODY_LENGTH = (1 << 20) + (64 << 10)
MAX_LENGTH = MIN_LENGTH + MAX_BODY_LENGTH
FLAG_MORE = 1

HELLO_TYPE = 1
CREATE_TYPE = 2
SEAL_TYPE = 3
ABORT_TYPE = 4
GET_TYPE = 5
GET_MANY_TYPE = 6
RELEASE_TYPE = 7
CONTAINS_TYPE = 8
DELETE_TYPE = 9
LIST_TYPE = 10
STAT_TYPE = 11
EVICT_TYPE = 12
PUT_TYPE = 13
REPLY_BIT = 0x8000
ERROR_TYPE = 0xFFFF

# major, minor, client pid
HELLO = struct.Struct("<HHI")
# major, minor, daemon pid, file length, heap offset, heap length, max body, max metadata, max GET_MANY ids,
# reserved, the store file's device and inode (no path: the client maps DIR/store.depot itself)
WELCOME = struct.Struct("<HHIQQQIIIIQQ")
# id, flags, data size, metadata length; then the metadata
CREATE = struct.Struct("<20sIQI")
CREATE_FLAG_NO_EVICT = 1
# PUT: CREATE's fields, the metadata, then the data; the reply is CREATED. Used for objects up to this size
# (larger ones are created and written in place: one copy instead of three).
PUT_MAX_INLINE = 64 << 10
CREATE_FLAG_KEEP = 2
# with this flag an int64 timeout in milliseconds (-1: no limit) follows the metadata
CREATE_FLAG_TIMEOUT = 4
CREATE_TIMEOUT = struct.Struct("<q")
# data file offset, data size
CREATED = struct.Struct("<QQ")
# SEAL, ABORT, CONTAINS, DELETE: the id
ID = struct.Struct("<20s")
# RELEASE: the id, reserved, the pin handle its GET replied with
RELEASE = struct.Struct("<20sIQ")
# CONTAINS, DELETE reply: 0 or 1
BOOLEAN = struct.Struct("<I")
# id, reserved, timeout ms (0 no wait, < 0 forever)
GET = struct.Struct("<20sIq")
# data offset, data size, metadata offset, metadata length, found, pin handle
LOCATION = struct.Struct("<QQQIIQ")
# timeout ms, count, reserved; then count ids
GET_MANY = struct.Struct("<qII")
# GET_MANY and LIST replies: count, reserved; then the entries
COUNT = struct.Struct("<II")
# id, state, metadata length, pins, data size, created ms, last access ms
ENTRY = struct.Struct("<20sIIIQqq")
STATES = ("creating", "sealed", "delete_pending", "deleting", "spilled")
# the figures of StoreStats, then this connection's pins and writers
STAT = struct.Struct("<QQQQQQQQQQQdQQQQ")
# EVICT request and reply: bytes
EVICT = struct.Struct("<Q")
# ERROR: code, message length; then the UTF-8 message
ERROR = struct.Struct("<II")


def frame(type_, request_id, body=b""):
    """A whole request frame."""
    if len(body) > MAX_BODY_LENGTH:
        raise ValueError("request body of %d bytes exceeds the protocol's %d" % (len(body), MAX_BODY_LENGTH))
    return HEADER.pack(MIN_LENGTH + len(body), type_, 0, request_id) + bytes(body)
