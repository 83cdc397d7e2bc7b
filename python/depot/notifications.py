"""Notifications: every object event of the store, from the moment of subscription (``Client.subscribe()``).

The consumer side of Java's subscriber rings (``dev.depot.core.notify.NotificationDescriptor`` draws them;
docs/DESIGN.md, "Notifications"): this process claims a ring with one CAS of its owner word, discards what a
previous owner left in it, and sets its bit of the active mask; publishers (Java clients in their own
processes, the daemon for evictions, spills, restores and for this client's writes) append 64-byte records
to it. A record is read once its stamp says ``COMMITTED`` for the current lap, then its cell is freed for the
next lap and the head moves on. Between events the subscriber sleeps in ``FUTEX_WAIT`` on the ring's wake
sequence (``_waiting.FutexWaiter``, with its sleeping flag as the waiter count; no polling). A full ring makes
publishers count missed events instead of waiting; a record whose publisher died between claim and commit is
aborted; both reach the subscriber as ``Event("missed", ...)``.
"""

import struct
import threading
import time

from . import _atomics as atomics
from . import _process
from ._layout import ClientTableDescriptor as CT
from ._layout import EventRecordDescriptor as ER
from ._layout import NotificationDescriptor as ND
from ._waiting import EXPIRED, FutexWaiter
from .errors import ClientClosedError, DepotError, ResourceLimitError
from .ids import ObjectId

__all__ = ["Event", "Subscription"]

_TYPES = {ER.TYPE_SEALED: "sealed", ER.TYPE_DELETED: "deleted", ER.TYPE_EVICTED: "evicted",
          ER.TYPE_SPILLED: "spilled", ER.TYPE_RESTORED: "restored"}
# type, metadata length, data length, id (20 bytes), publisher pid, time (ms)
_RECORD = struct.Struct("<iiq20siq")
assert (ER.METADATA_LENGTH_OFFSET == ER.TYPE_OFFSET + 4 and ER.DATA_LENGTH_OFFSET == ER.TYPE_OFFSET + 8
        and ER.ID_OFFSET == ER.TYPE_OFFSET + 16 and ER.PUBLISHER_PID_OFFSET == ER.ID_OFFSET + ER.ID_LENGTH
        and ER.TIME_OFFSET == ER.PUBLISHER_PID_OFFSET + 4), "event record fields moved: update _RECORD"
_LAP_SHIFT = ER.KIND_BITS
_KIND_MASK = (1 << ER.KIND_BITS) - 1
# The owner of a ring being released (Java's EventRings.RELEASING, -1 as an unsigned word): no process.
_RELEASING = (1 << 64) - 1
# How long the subscriber sleeps at a record a live publisher is writing before it looks again (as Java).
_CLAIMED_RECHECK_SECONDS = 0.01


def _stamp(lap, kind):
    return ((lap & ER.LAP_MASK) << _LAP_SHIFT) | kind


class Event:
    """One event: ``type`` is ``"sealed"``, ``"deleted"``, ``"evicted"``, ``"spilled"``, ``"restored"`` or
    ``"missed"``; ``id`` the object's ``ObjectId`` (None for missed); ``data_size`` and ``metadata_size`` its
    sizes; ``missed`` the number of events lost (missed only); ``pid`` the process that did it; ``time`` when
    (seconds since the epoch)."""

    __slots__ = ("type", "id", "data_size", "metadata_size", "missed", "pid", "time")

    def __init__(self, type, id, data_size, metadata_size, missed, pid, time):
        self.type = type
        self.id = id
        self.data_size = data_size
        self.metadata_size = metadata_size
        self.missed = missed
        self.pid = pid
        self.time = time

    def __repr__(self):
        if self.type == "missed":
            return "Event(missed %d events)" % self.missed
        return "Event(%s %s, %d + %d bytes, pid %d)" % (self.type, self.id.hex(), self.data_size, self.metadata_size,
                                                       self.pid)


class Subscription:
    """Every object event of the store from now on. An iterator (blocks until the next event) and a context
    manager; ``next(timeout=...)`` returns None when nothing came in time. One thread reads at a time. A store
    has ``NotificationDescriptor.SUBSCRIBERS`` (16) subscriber slots; ``close()`` (or the end of the process,
    through the daemon's reaper) frees this one.

    Examples
    --------
    >>> with client.subscribe() as events:          # doctest: +SKIP
    ...     for event in events:
    ...         print(event.type, event.id.hex(), event.data_size)
    """

    def __init__(self, mapping):
        if not mapping.notification_offset:
            raise DepotError("the store at %s has format 1.%d, which has no notification region; recreate it with "
                             "this Depot to subscribe" % (mapping.path, mapping.minor_version))
        self._ring = -1
        self._closed = False
        self._mapping = mapping
        self._region = mapping.base + mapping.notification_offset
        self._identity = _process.identity()
        self._lock = threading.Lock()
        self._closed = False
        self._missed_seen_at = -1
        self._head_claimed = False
        self._ring = self._claim()
        if self._ring < 0:
            raise ResourceLimitError("the store at %s has all %d subscriber slots taken; close a subscription "
                                     "(`depot watch` included) or wait for the daemon to free those of dead "
                                     "processes" % (mapping.path, ND.SUBSCRIBERS))
        self._base = self._region + ND.REGION_HEADER_LENGTH + self._ring * ND.RING_LENGTH
        self._discard_backlog()
        self._set_active(True)

    # ---- claiming and releasing the ring ----------------------------------------------------------------

    def _owner_at(self, ring):
        return self._region + ND.REGION_HEADER_LENGTH + ring * ND.RING_LENGTH + ND.OWNER_OFFSET

    def _claim(self):
        for ring in range(ND.SUBSCRIBERS):
            at = self._owner_at(ring)
            if atomics.get_long_volatile(at) == 0 and atomics.compare_and_set_long(at, 0, self._identity):
                return self._started(ring)
        # None free: take over a ring whose subscriber died (as Java's EventRings.subscribe).
        for ring in range(ND.SUBSCRIBERS):
            at = self._owner_at(ring)
            dead = atomics.get_long_volatile(at)
            if dead and not _alive(dead) and atomics.compare_and_set_long(at, dead, self._identity):
                return self._started(ring)
        return -1

    def _started(self, ring):
        atomics.put_long_opaque(self._owner_at(ring) - ND.OWNER_OFFSET + ND.SUBSCRIBED_AT_OFFSET,
                                time.time_ns() // 1_000_000)
        return ring

    def _set_active(self, active):
        mask_at = self._region + ND.ACTIVE_MASK_OFFSET
        bit = 1 << self._ring
        while True:
            mask = atomics.get_int_volatile(mask_at)
            new = (mask | bit) if active else (mask & ~bit)
            if new == mask or atomics.compare_and_set_int(mask_at, mask, new):
                return

    def _release(self):
        # Owner to RELEASING first (one CAS), then off the active mask, then free: as Java's EventRings.release.
        at = self._owner_at(self._ring)
        if atomics.compare_and_set_long(at, self._identity, _RELEASING):
            self._set_active(False)
            atomics.put_long_volatile(at, 0)

    # ---- reading ----------------------------------------------------------------------------------------

    def _head(self):
        return atomics.get_long_opaque(self._base + ND.HEAD_OFFSET)

    def _discard_backlog(self):
        target = atomics.get_long_volatile(self._base + ND.TAIL_OFFSET)
        deadline = time.monotonic() + 1.0
        while self._head() < target:
            if self._poll(True) is None:
                if time.monotonic() > deadline:
                    break  # a record held by a stopped publisher: deliver what follows it rather than hang here
                time.sleep(0)
        self._take_missed()
        self._missed_seen_at = -1

    def _take_missed(self):
        at = self._base + ND.MISSED_OFFSET
        while True:
            n = atomics.get_long_volatile(at)
            if n == 0 or atomics.compare_and_set_long(at, n, 0):
                return n

    def _report_missed(self):
        self._missed_seen_at = -1
        n = self._take_missed()
        return Event("missed", None, 0, 0, n, 0, time.time()) if n else None

    def _poll(self, discarding):
        """The next event, a missed report, or None; never waits (Java's Subscriber.poll)."""
        base = self._base
        while True:
            head = self._head()
            if (not discarding and self._missed_seen_at < 0
                    and atomics.get_long_volatile(base + ND.MISSED_OFFSET) != 0):
                self._missed_seen_at = head
            if self._missed_seen_at >= 0 and head - self._missed_seen_at >= ND.RING_RECORDS:
                return self._report_missed()
            lap = head // ND.RING_RECORDS
            record = base + ND.RECORDS_OFFSET + (head % ND.RING_RECORDS) * ER.RECORD_LENGTH
            stamp = atomics.get_long_volatile(record + ER.STAMP_OFFSET)
            kind = stamp & _KIND_MASK
            if (stamp >> _LAP_SHIFT) & ER.LAP_MASK != lap or kind == ER.KIND_FREE:
                return self._report_missed() if self._missed_seen_at >= 0 else None
            if kind == ER.KIND_COMMITTED:
                event = True if discarding else self._read(record)
                self._advance(record, lap, head)
                return event
            if kind == ER.KIND_ABORTED:
                self._advance(record, lap, head)
                if not discarding:
                    return Event("missed", None, 0, 0, 1, 0, time.time())  # its publisher died writing it
                continue
            # CLAIMED: being written (its commit wakes us), unless its publisher died between claim and commit.
            if self._claimer_alive(stamp >> ER.CLAIMER_SHIFT):
                self._head_claimed = True
                return self._report_missed() if self._missed_seen_at >= 0 else None
            atomics.compare_and_set_long(record + ER.STAMP_OFFSET, stamp, _stamp(lap, ER.KIND_ABORTED))

    def _claimer_alive(self, claimer_plus_one):
        m = self._mapping
        client = claimer_plus_one - 1
        if not 0 <= client < m.max_clients:
            return False
        identity = atomics.get_long_volatile(m.base + m.client_table_offset + client * m.slot_length
                                             + CT.IDENTITY_OFFSET)
        return _alive(identity)

    def _read(self, record):
        offset = record - self._mapping.base + ER.TYPE_OFFSET
        type_, metadata_length, data_length, raw, pid, millis = _RECORD.unpack_from(self._mapping.mm, offset)
        name = _TYPES.get(type_)
        if name is None:
            raise DepotError("event of unknown type %d in the notification region of %s; run `depot doctor`"
                             % (type_, self._mapping.path))
        return Event(name, ObjectId(raw), data_length, metadata_length, 0, pid, millis / 1000.0)

    def _advance(self, record, lap, head):
        # Frees the cell for the next lap (release: after our reads of it), then moves the head on.
        atomics.put_long_release(record + ER.STAMP_OFFSET, _stamp(lap + 1, ER.KIND_FREE))
        atomics.put_long_release(self._base + ND.HEAD_OFFSET, head + 1)

    def _add_sleeper(self, delta):
        # The waiter count of this single-reader ring: its sleeping flag, which publishers read after their bump.
        atomics.put_int_volatile(self._base + ND.SLEEPING_OFFSET, 1 if delta > 0 else 0)

    def next(self, timeout=None):
        """The next ``Event``, waiting up to ``timeout`` seconds (None: forever, 0: do not wait); None when none
        came in time. Raises ``ClientClosedError`` once the subscription is closed.

        Between polls it waits on the ring's wake sequence (``_waiting.FutexWaiter``, without spinning): Dekker
        with the publishers' wake (as Java), the sleeping flag raised, each turn reads the sequence and polls
        again. ``close()`` sets its flag before it bumps the sequence, so a turn sees one or the other."""
        deadline = None if timeout is None else time.monotonic_ns() + int(timeout * 1e9)
        with self._lock, FutexWaiter(self._base + ND.WAKE_SEQUENCE_OFFSET, self._add_sleeper, 0, deadline) as wait:
            while True:
                sequence = wait.sequence()
                if self._closed:
                    raise ClientClosedError("this subscription is closed")
                self._head_claimed = False
                event = self._poll(False)
                if event is not None:
                    return event
                # A record claimed by a live publisher is committed soon, or its publisher dies: look again now
                # and then.
                if wait.pause(sequence, _CLAIMED_RECHECK_SECONDS if self._head_claimed else None) is EXPIRED:
                    return None

    def __iter__(self):
        return self

    def __next__(self):
        try:
            return self.next()
        except ClientClosedError:
            raise StopIteration from None

    def close(self):
        """Frees the subscriber slot; a ``next()`` waiting in another thread wakes and ends. Harmless twice."""
        if self._closed or self._ring < 0:
            self._closed = True
            return
        self._closed = True
        if self._lock.acquire(blocking=False):
            try:
                self._release()
            finally:
                self._lock.release()
        else:
            # A reader sleeps in next(): wake it; it sees the flag, and we release once it has let go.
            atomics.get_and_add_int(self._base + ND.WAKE_SEQUENCE_OFFSET, 1)
            atomics.futex_wake_all(self._base + ND.WAKE_SEQUENCE_OFFSET)
            with self._lock:
                self._release()

    @property
    def closed(self):
        return self._closed

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            if not self._closed and self._ring >= 0 and _process.identity() == self._identity:
                self.close()
        except Exception:
            pass


def _alive(identity):
    if identity == 0 or identity == _RELEASING:
        return False
    return _process.identity_of(identity >> 32) == identity
