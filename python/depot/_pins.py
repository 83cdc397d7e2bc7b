"""This client's own slot in the store's client table, and the pin records it writes there.

As Java's ``ClientTable``/``PinTable``: the slot is claimed with one CAS of its identity word from 0 to this
process's identity; a pin is one record ``(index slot + 1) << 32 | generation`` published with a volatile
(sequentially consistent) store, cleared with another. Each record is written whole by one store, so a
process killed at any instruction leaves only whole records, which the daemon clears when it reclaims the
slot of a dead process (every 100 ms). Free record positions are a process-local stack (lowest first, so
the high-water mark that scanners read stays low), published high-water mark before record.

With the C extension (``depot._accel``) a ``_native.Slot`` publishes and releases the records, the whole release
in one call; without it each atomic access is a ``ctypes`` call. The free positions are Python's on both paths.

Thread-safe, and safe to call from finalisers: ``unpin`` waits for no lock (list append and pop are atomic in
CPython; a delete it finishes takes the allocator lock only if it is free at once). After ``os.fork()`` the
slot is the parent's: the child neither pins nor unpins in it.
"""

import threading
import time

from . import _atomics as atomics
from . import _process
from . import _space as space
from ._accel import native as _native
from ._layout import ClientTableDescriptor as CT
from ._layout import EntryState
from ._layout import IndexEntryDescriptor as IE
from .errors import ClientClosedError, ResourceLimitError

# how long registering waits for the daemon to reclaim dead clients' slots when the table is full (as Java)
_REGISTER_WAIT_SECONDS = 1.5


def pin_record(index_slot, generation):
    return ((index_slot + 1) << 32) | generation


class ClientSlot:
    """A claimed slot of the client table. Freed by ``close()`` once no pin taken in it is held any more."""

    def __init__(self, mapping):
        self.mapping = mapping
        self.fork_generation = _process.fork_generation()
        self.identity = _process.identity()
        table = mapping.base + mapping.client_table_offset
        deadline = time.monotonic() + _REGISTER_WAIT_SECONDS
        while True:
            self.index = self._claim(table)
            if self.index >= 0:
                break
            if time.monotonic() > deadline:
                raise ResourceLimitError("the store at %s has all %d client slots taken by running processes; close a "
                                         "client or recreate the store with a larger --max-clients"
                                         % (mapping.path, mapping.max_clients))
            time.sleep(0.02)  # the daemon reclaims dead clients' slots every 100 ms
        self.address = table + self.index * mapping.slot_length
        atomics.put_int_opaque(self.address + CT.KIND_OFFSET, CT.KIND_PYTHON)
        atomics.put_long_opaque(self.address + CT.REGISTERED_AT_OFFSET, time.time_ns() // 1_000_000)
        self.capacity = mapping.pins_per_client
        self._records = self.address + CT.PIN_RECORDS_OFFSET
        self._free = list(range(self.capacity - 1, -1, -1))
        self._high_water = 0
        self._entries = mapping.base + mapping.index_offset
        #: ``(index slot, state word)`` -> None: finishes a delete this slot's unpin found DELETE_PENDING (set by
        #: the client to its ``LocalWrites.finish_pending_delete``; None: the daemon's sweep does)
        self.finish_pending_delete = None
        self._lock = threading.Lock()
        self._closed = False
        # objects this slot is creating without the daemon (CREATING entries naming the slot): while any is
        # left the slot is not given back, so that the daemon's reaper settles them if the process dies
        self._creating = 0
        # one entry while the slot is registered: popped (atomically) by whoever frees it
        self._registered = [True]
        #: the C extension's view of this slot (``pin``, ``publish``, ``release``, ``clear``), or None: ctypes
        self.native = None if _native is None else _native.Slot(
            mapping, mapping.base, mapping.file_length, mapping.index_offset, mapping.index_slots,
            mapping.heap_offset, mapping.heap_length, self.address - mapping.base, self.capacity, mapping.path)

    def _claim(self, table):
        for c in range(self.mapping.max_clients):
            at = table + c * self.mapping.slot_length + CT.IDENTITY_OFFSET
            if atomics.get_long_volatile(at) == 0 and atomics.compare_and_set_long(at, 0, self.identity):
                return c
        return -1

    @property
    def owned(self):
        """False in a forked child: the slot is the parent's."""
        return self.fork_generation == _process.fork_generation()

    def held(self):
        return self.capacity - len(self._free)

    def take_position(self):
        """A free record position, taken for a pin about to be published (``give_back`` returns it unused).

        Without a lock: the pop is atomic, and ``close`` sets ``_closed`` before it looks whether every position
        is free, so either it sees this one taken (and leaves the slot to the last ``give_back``) or this sees
        it closed after the pop (and gives the position back, which frees the slot)."""
        if self._closed:
            raise ClientClosedError("this Depot client is closed; connect again")
        try:
            position = self._free.pop()
        except IndexError:
            raise ResourceLimitError("this client holds %d pinned objects, the most a client may; release views "
                                     "(and drop arrays) you no longer need" % self.capacity) from None
        if self._closed:
            self.give_back(position)
            raise ClientClosedError("this Depot client is closed; connect again")
        if self.native is None and position >= self._high_water:
            with self._lock:
                if position >= self._high_water:
                    self._high_water = position + 1
                    # Published before the record: a scanner that sees the record sees it within the mark.
                    atomics.put_int_release(self.address + CT.PIN_HIGH_WATER_OFFSET, self._high_water)
        return position

    def give_back(self, position):
        """Returns a position whose record is clear; the slot is freed after the last one once it is closed."""
        self._free.append(position)
        if self._closed and len(self._free) == self.capacity and not self._creating:
            self._release_slot()

    def pin(self, record):
        """Publishes a pin record (volatile: the caller's next volatile load of the entry cannot move before it,
        the Dekker handshake with a deleter's CAS then scan) and returns its position."""
        position = self.take_position()
        if self.native is not None:
            self.native.publish(position, record)  # the high-water mark, then the record
        else:
            atomics.put_long_volatile(self._records + position * CT.PIN_RECORD_LENGTH, record)
        return position

    def unpin(self, position, record, record_use=False):
        """Clears a record (volatile), then looks at the entry (volatile) as Java's last unpinner does: a delete
        that this pin held back (DELETE_PENDING, same generation) is finished here (``finish_pending_delete``,
        which frees it when no other pin is left and the lock is free), else by the daemon's sweep within its reap
        interval. With ``record_use``, first records a use of the entry (``record_use``)."""
        if self.fork_generation != _process._fork_generation:
            return  # the parent's pin: not ours to release
        native = self.native
        if native is not None:
            # the use, the record, the space sequence and the state word, in one call
            word = native.release(position, record, record_use)
        else:
            if record_use:
                self.record_use(record)
            atomics.put_long_volatile(self._records + position * CT.PIN_RECORD_LENGTH, 0)
            # the object may be evictable now: a create waiting for room that may evict tries again (as Java's unpin)
            space.object_became_evictable(self.mapping.base)
            word = 0
            if self.finish_pending_delete is not None:
                word = atomics.get_long_volatile(self._entries + ((record >> 32) - 1) * IE.ENTRY_LENGTH
                                                 + IE.STATE_WORD_OFFSET)
                if word & 0xFF != EntryState.DELETE_PENDING or word >> IE.GENERATION_SHIFT != record & 0xFFFFFFFF:
                    word = 0
        # before the position is free again: until then the slot cannot be given back, so the delete finished
        # here (owned by this slot) is this slot's
        if word:
            finish = self.finish_pending_delete
            if finish is not None:
                try:
                    finish((record >> 32) - 1, word)
                except Exception:
                    pass  # the daemon's sweep finishes it; an unpin (often a finaliser) must not fail
        free = self._free
        free.append(position)
        if self._closed and len(free) == self.capacity and not self._creating:
            self._release_slot()

    def creating(self, delta):
        """Counts an object this slot starts (+1) or stops (-1) creating; the slot is given back after the last
        one once it is closed and holds no pin."""
        with self._lock:
            self._creating += delta
            done = self._closed and self._creating == 0 and len(self._free) == self.capacity
        if done and self.owned:
            self._release_slot()

    def record_use(self, record):
        """Records a use of the pinned entry named by ``record`` for eviction (Java's ``ObjectIndex.recordUse``):
        its last use becomes now, in epoch µs, unless it is less than ``USE_RECORD_INTERVAL_MICROS`` old, so
        that readers of a hot object share its cache line. Called before the pin is released: the pin keeps
        the entry this object's."""
        if self.fork_generation != _process._fork_generation:
            return  # the parent's pin: not ours to release
        at = self._entries + ((record >> 32) - 1) * IE.ENTRY_LENGTH + IE.LAST_ACCESS_OFFSET
        now = time.time_ns() // 1000
        if now - atomics.get_long_opaque(at) >= IE.USE_RECORD_INTERVAL_MICROS:
            atomics.put_long_opaque(at, now)

    def unpin_quietly(self, position):
        """Clears a record whose pin never took (the entry changed between lookup and pin)."""
        if self.native is not None:
            self.native.clear(position)
        else:
            atomics.put_long_volatile(self._records + position * CT.PIN_RECORD_LENGTH, 0)
        self._free.append(position)

    def close(self):
        """No more pins; the slot is freed now if none is held, else when the last one is released."""
        with self._lock:
            self._closed = True
            idle = len(self._free) == self.capacity and not self._creating
        if self.owned and idle:
            self._release_slot()

    def _release_slot(self):
        try:
            self._registered.pop()
        except IndexError:
            return  # freed already
        hw = min(atomics.get_int_acquire(self.address + CT.PIN_HIGH_WATER_OFFSET), self.capacity)
        for r in range(hw):
            atomics.put_long_volatile(self._records + r * CT.PIN_RECORD_LENGTH, 0)
        atomics.put_int_release(self.address + CT.PIN_HIGH_WATER_OFFSET, 0)
        atomics.compare_and_set_long(self.address + CT.IDENTITY_OFFSET, self.identity, 0)

    def __del__(self):
        # At interpreter exit (or a leaked client): give the slot back; the daemon would reclaim it anyway.
        try:
            if self.owned and getattr(self, "_registered", None) and not self._creating:
                self._release_slot()
        except Exception:
            pass


class Pin:
    """One pin record held for a view or array. Released once: explicitly, or when the last buffer or view
    holding it is garbage-collected (``__del__``)."""

    __slots__ = ("_cell", "position", "record", "__weakref__")

    def __init__(self, slot, position, record):
        self._cell = [slot]
        self.position = position
        self.record = record

    @property
    def held(self):
        return bool(self._cell)

    def release(self):
        try:
            slot = self._cell.pop()  # atomic: of two threads releasing at once, one does it
        except IndexError:
            return
        slot.unpin(self.position, self.record, True)

    def __del__(self):
        try:
            self.release()
        except Exception:
            pass


# state word fields
def state_of(word):
    return word & 0xFF


def generation_of(word):
    return word >> IE.GENERATION_SHIFT


SEALED = EntryState.SEALED
