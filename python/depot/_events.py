"""Publishing object events to the store's subscriber rings, as Java's ``dev.depot.core.notify.EventRings.publish``.

For each ring whose bit is set in the active mask: claim the record at the tail with a CAS of its stamp (FREE of
this lap to CLAIMED by our client slot), advance the tail, fill the record, commit it with a volatile store of
the stamp (a reader that sees COMMITTED sees the fields), then bump the ring's wake sequence and wake its
subscriber if it sleeps. A full ring counts a missed event instead; a publisher killed between claim and commit
leaves a CLAIMED record naming its slot, which the daemon's reaper aborts. The subscriber's side is
``notifications``.
"""

import os
import struct
import time

from . import _atomics as atomics
from ._layout import EventRecordDescriptor as ER
from ._layout import EventRings as ERS
from ._layout import NotificationDescriptor as ND

# type, metadata length, data length, id (20 bytes), publisher pid, time (ms): the record after its stamp
_RECORD = struct.Struct("<iiq20siq")
assert (ER.METADATA_LENGTH_OFFSET == ER.TYPE_OFFSET + 4 and ER.DATA_LENGTH_OFFSET == ER.TYPE_OFFSET + 8
        and ER.ID_OFFSET == ER.TYPE_OFFSET + 16 and ER.PUBLISHER_PID_OFFSET == ER.ID_OFFSET + ER.ID_LENGTH
        and ER.TIME_OFFSET == ER.PUBLISHER_PID_OFFSET + 4), "event record fields moved: update _RECORD"
_KIND_MASK = (1 << ER.KIND_BITS) - 1


def _stamp(lap, kind, claimer=0):
    c = (claimer + 1) << ER.CLAIMER_SHIFT if kind == ER.KIND_CLAIMED else 0
    return c | (lap & ER.LAP_MASK) << ER.KIND_BITS | kind


class EventPublisher:
    """Publishes to one mapping's rings as client slot ``client``."""

    def __init__(self, mapping, client):
        self._mm = mapping.mm
        self._region_offset = mapping.notification_offset
        self._region = mapping.base + mapping.notification_offset if mapping.notification_offset else 0
        self._client = client

    def anyone_listens(self):
        """True when some ring is active (one volatile read): else nothing needs drafting."""
        return self._region != 0 and atomics.get_int_volatile(self._region + ND.ACTIVE_MASK_OFFSET) != 0

    def publish(self, type_, raw_id, data_length, metadata_length):
        if self._region == 0:
            return
        mask = atomics.get_int_volatile(self._region + ND.ACTIVE_MASK_OFFSET)
        while mask:
            ring = (mask & -mask).bit_length() - 1
            mask &= mask - 1
            self._append(ND.REGION_HEADER_LENGTH + ring * ND.RING_LENGTH, type_, raw_id, data_length, metadata_length)

    def _append(self, ring, type_, raw_id, data_length, metadata_length):
        region = self._region
        tail = region + ring + ND.TAIL_OFFSET
        for _ in range(ERS.MAX_CLAIM_ATTEMPTS):
            position = atomics.get_long_volatile(tail)
            lap = position // ND.RING_RECORDS
            record = ring + ND.RECORDS_OFFSET + (position & (ND.RING_RECORDS - 1)) * ER.RECORD_LENGTH
            stamp_at = region + record + ER.STAMP_OFFSET
            stamp = atomics.get_long_volatile(stamp_at)
            stamp_lap = (stamp >> ER.KIND_BITS) & ER.LAP_MASK
            if stamp == _stamp(lap, ER.KIND_FREE):
                if not atomics.compare_and_set_long(stamp_at, stamp, _stamp(lap, ER.KIND_CLAIMED, self._client)):
                    continue  # another publisher claimed it: it advances the tail, we try the next
                atomics.compare_and_set_long(tail, position, position + 1)
                _RECORD.pack_into(self._mm, self._region_offset + record + ER.TYPE_OFFSET, type_, metadata_length,
                                  data_length, raw_id, os.getpid(), time.time_ns() // 1_000_000)
                # Commit: the fields above are published with the stamp.
                atomics.put_long_volatile(stamp_at, _stamp(lap, ER.KIND_COMMITTED))
                self._wake(ring)
                return
            if stamp_lap == lap and stamp & _KIND_MASK != ER.KIND_FREE:
                # Claimed by another publisher that has not advanced the tail yet: help it, then retry.
                atomics.compare_and_set_long(tail, position, position + 1)
                continue
            if stamp_lap < lap:
                break  # the cell still holds the previous lap, unread: the ring is full
        atomics.get_and_add_long(region + ring + ND.MISSED_OFFSET, 1)
        self._wake(ring)

    def _wake(self, ring):
        sequence = self._region + ring + ND.WAKE_SEQUENCE_OFFSET
        atomics.get_and_add_int(sequence, 1)
        if atomics.get_int_volatile(self._region + ring + ND.SLEEPING_OFFSET) != 0:
            atomics.futex_wake_all(sequence)
