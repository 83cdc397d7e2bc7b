"""Socket-free reads of the shared object index: look an id up, pin it, wait for its seal.

The same protocol as Java's ``ObjectIndex.findSealed`` and ``Store.tryPin``/``sealWaiter`` (docs/DESIGN.md,
"get"): find a SEALED (or EVICTING) entry with the id, lock-free (acquire loads of the state word); write a
pin record ``(slot, generation)`` into our own client slot (volatile store); re-read the state word
(volatile load): still SEALED with the same generation means pinned, and the entry's fields cannot change
until the pin is released. A deleter CASes the state first and scans pin records after: one of the two
always sees the other. Waiting (``_waiting.FutexWaiter``) reads the id's futex word first, looks, spins for
the first 20 µs while the word is unchanged, counts itself among the seal waiters, looks again, then sleeps in
``FUTEX_WAIT`` on it until a seal bumps it.
"""

import os
import struct
import time

from . import _atomics as atomics
from . import _process
from ._layout import HOME_MULTIPLIER, HOME_ROTATION, HOME_SHIFT
from ._layout import ClientTableDescriptor as CT
from ._layout import EntryState as ES
from ._layout import HeapBlockDescriptor as HB
from ._layout import IndexEntryDescriptor as IE
from ._layout import RestoreFailureDescriptor as RF
from ._layout import Store
from ._layout import StoreHeaderDescriptor as H
from ._pins import Pin, pin_record
from ._waiting import EXPIRED, FutexWaiter
from .errors import DepotError, ObjectLostError, StoreFormatError, StoreFullError

_ID_WORDS = struct.Struct("<QQI")
# An entry's metadata length, block offset and data length: one read. They do not change while it is pinned.
_PLACE = struct.Struct("<IQQ")
assert (IE.BLOCK_OFFSET_OFFSET == IE.METADATA_LENGTH_OFFSET + 4
        and IE.DATA_LENGTH_OFFSET == IE.BLOCK_OFFSET_OFFSET + 8), "entry fields moved: update _PLACE"
_MASK64 = (1 << 64) - 1
# A restore failure record's slot, generation, kind and reason length: one read.
_FAILURE = struct.Struct("<iIiI")
assert (RF.GENERATION_OFFSET == RF.SLOT_OFFSET + 4 and RF.KIND_OFFSET == RF.SLOT_OFFSET + 8
        and RF.REASON_LENGTH_OFFSET == RF.SLOT_OFFSET + 12), "restore failure fields moved: update _FAILURE"
# How long a reader lets an eviction in progress settle before calling the object missing (as Java).
_EVICTING_WAIT_NANOS = 50_000_000
# How long a waiter spins on the futex word before sleeping: a seal that close is met without a wake-up.
_SPIN_NANOS = 20_000


class Located:
    """A pinned object: its pin and where its bytes lie in the store file (and, from the C path, a copy of its
    metadata, else None)."""

    __slots__ = ("pin", "data_offset", "size", "metadata_offset", "metadata_length", "metadata")

    def __init__(self, pin, data_offset, size, metadata_offset, metadata_length, metadata=None):
        self.pin = pin
        self.data_offset = data_offset
        self.size = size
        self.metadata_offset = metadata_offset
        self.metadata_length = metadata_length
        self.metadata = metadata


class IndexReader:
    """Lock-free lookups in one mapping's index, pinning into one client slot."""

    def __init__(self, mapping, slot):
        self.mapping = mapping
        self.slot = slot
        self._entries = mapping.base + mapping.index_offset
        self._entries_offset = mapping.index_offset
        self._mask = mapping.index_slots - 1
        self._max_probe = min(mapping.index_slots, IE.MAX_PROBE)
        self._futex_words = mapping.base + H.FUTEX_WORDS_OFFSET
        self._futex_waiters = mapping.base + H.FUTEX_WAITERS_OFFSET

    def home(self, w0, w1):
        rotated = ((w1 << HOME_ROTATION) | (w1 >> (64 - HOME_ROTATION))) & _MASK64
        return (((w0 ^ rotated) * HOME_MULTIPLIER) & _MASK64) >> HOME_SHIFT & self._mask

    def find_sealed(self, raw, home):
        """``(slot, generation)`` of a SEALED or EVICTING entry with this id as it was when the id matched, or
        None. The caller pins and re-checks the generation."""
        slot = home
        mm = self.mapping.mm
        for _ in range(self._max_probe):
            word = atomics.get_long_acquire(self._entries + slot * IE.ENTRY_LENGTH + IE.STATE_WORD_OFFSET)
            state = word & 0xFF
            if state == ES.EMPTY:
                return None
            if state == ES.SEALED or state == ES.EVICTING:
                at = self._entries_offset + slot * IE.ENTRY_LENGTH + IE.ID_OFFSET
                # Read after the acquire of this generation; the re-check after pinning proves it was its id.
                if mm[at:at + IE.ID_LENGTH] == raw:
                    return slot, word >> IE.GENERATION_SHIFT
            slot = (slot + 1) & self._mask
        return None

    def home_of(self, raw):
        w0, w1, _ = _ID_WORDS.unpack(raw)
        return self.home(w0, w1)

    def try_pin(self, raw, home=None):
        """Pins the sealed object with id ``raw`` (20 bytes): a ``Located``, or None when there is none."""
        native = self.slot.native
        if native is not None:
            return self._try_pin_native(native, raw)
        if home is None:
            home = self.home_of(raw)
        evicting_since = 0
        slot_table = self.slot
        while True:
            found = self.find_sealed(raw, home)
            if found is None:
                return None
            index_slot, generation = found
            record = pin_record(index_slot, generation)
            position = slot_table.pin(record)
            state_word = self._entries + index_slot * IE.ENTRY_LENGTH + IE.STATE_WORD_OFFSET
            word = atomics.get_long_volatile(state_word)
            if word >> IE.GENERATION_SHIFT == generation:
                state = word & 0xFF
                if state == ES.SEALED:
                    located = self._located(index_slot, Pin(slot_table, position, record))
                    # This client's own operation counter (summed by the daemon's /metrics), as Java's Store.
                    atomics.get_and_add_long(slot_table.address + CT.GETS_OFFSET, 1)
                    return located
                # A deleter may have seen this transient pin and deferred: release it as an unpin does.
                slot_table.unpin(position, record)
                if state == ES.EVICTING:
                    evicting_since = evicting_since or time.monotonic_ns()
                    if time.monotonic_ns() - evicting_since > _EVICTING_WAIT_NANOS:
                        return None
                    os.sched_yield()
                    continue
                return None
            # The slot was reused between lookup and pin: look again.
            slot_table.unpin_quietly(position)

    def _try_pin_native(self, native, raw):
        """``try_pin`` with the lookup, the pin, the state check and the entry's fields in one C call
        (``_native.Slot.pin``, which checks what it reads as ``_located`` does)."""
        slot_table = self.slot
        evicting_since = 0
        while True:
            position = slot_table.take_position()
            try:
                found = native.pin(raw, position)
            except BaseException:
                slot_table.give_back(position)  # the record is clear
                raise
            if found is None:
                slot_table.give_back(position)
                return None
            if len(found) == 4:
                record, data_offset, size, metadata = found
                return Located(Pin(slot_table, position, record), data_offset, size, data_offset + size,
                               len(metadata), metadata)
            # Pinned, but no longer sealed: a deleter may have seen this transient pin and deferred.
            record, word = found
            slot_table.unpin(position, record)
            if word & 0xFF != ES.EVICTING:
                return None
            evicting_since = evicting_since or time.monotonic_ns()
            if time.monotonic_ns() - evicting_since > _EVICTING_WAIT_NANOS:
                return None
            os.sched_yield()

    def _located(self, index_slot, pin):
        m = self.mapping
        entry = self._entries_offset + index_slot * IE.ENTRY_LENGTH
        metadata_length, block, size = _PLACE.unpack_from(m.mm, entry + IE.METADATA_LENGTH_OFFSET)
        data_offset = m.heap_offset + block + HB.HEADER_LENGTH
        if (block >= m.heap_length or metadata_length > Store.MAX_METADATA_LENGTH
                or data_offset + size + metadata_length > m.file_length):
            pin.release()
            raise StoreFormatError("index slot %d of %s is corrupt: block %d, %d bytes of data and %d of metadata do "
                                   "not fit the %d-byte heap; run `depot doctor`"
                                   % (index_slot, m.path, block, size, metadata_length, m.heap_length))
        # No store to the entry here: the use is recorded when the pin is released (``Pin.release``).
        return Located(pin, data_offset, size, data_offset + size, metadata_length)

    # ---- spilled objects -------------------------------------------------------------------------------

    def find_spilled(self, raw, w0, w1):
        """The index slot of a spilled (or being restored) entry with this id, or None (Java's findSpilled)."""
        slot = self.home(w0, w1)
        mm = self.mapping.mm
        for _ in range(self._max_probe):
            state = atomics.get_long_acquire(self._entries + slot * IE.ENTRY_LENGTH + IE.STATE_WORD_OFFSET) & 0xFF
            if state == ES.EMPTY:
                return None
            if state in (ES.SPILLED, ES.RESTORE_WANTED, ES.RESTORING):
                at = self._entries_offset + slot * IE.ENTRY_LENGTH + IE.ID_OFFSET
                if mm[at:at + IE.ID_LENGTH] == raw:
                    return slot
            slot = (slot + 1) & self._mask
        return None

    def spiller_is_on(self):
        """True while a live daemon spills and restores (Java's Store.spillerIsOn)."""
        base = self.mapping.base
        if atomics.get_int_acquire(base + H.SPILL_STATE_OFFSET) != H.SPILL_STATE_ON:
            return False
        daemon = atomics.get_long_volatile(base + H.DAEMON_IDENTITY_OFFSET)
        return daemon != 0 and _process.identity_of(daemon >> 32) == daemon

    def request_restore(self, raw):
        """When ``raw`` names a spilled object, asks the daemon's spiller to restore it (Java's
        Store.requestRestore: CAS SPILLED to RESTORE_WANTED, so that concurrent readers ask once, then bump and
        wake the spiller's futex word) and returns its entry ``(slot, generation)``, whose failure record says
        why if the restore fails; the restore ends with a seal notification of the id's bucket. None when no
        spilled object has this id. Raises DepotError when no daemon can restore it, ObjectLostError when the
        entry went because its file was lost."""
        w0, w1, _ = _ID_WORDS.unpack(raw)
        seen = None
        while True:
            slot = self.find_spilled(raw, w0, w1)
            if slot is None:
                if seen is not None:
                    self.check_restore(raw, seen, False, False)  # gone since: lost, restored or deleted
                return None
            if not self.spiller_is_on():
                raise DepotError("object %s is spilled to disk but no daemon with a spill directory serves %s to "
                                 "restore it; start `depot serve --dir %s --spill-dir DIR`"
                                 % (raw.hex(), self.mapping.path, os.path.dirname(self.mapping.path)))
            state_word = self._entries + slot * IE.ENTRY_LENGTH + IE.STATE_WORD_OFFSET
            word = atomics.get_long_volatile(state_word)
            state = word & 0xFF
            seen = (slot, (word >> IE.GENERATION_SHIFT) & 0xFFFF_FFFF)
            if state == ES.SPILLED:
                # Same generation and flags, no owner, new state (Java's IndexEntryDescriptor.withState).
                wanted = (word & ~(IE.OWNER_MASK << IE.OWNER_SHIFT | 0xFF)) | ES.RESTORE_WANTED
                if not atomics.compare_and_set_long(state_word, word, wanted):
                    continue
                sequence = self.mapping.base + H.SPILL_REQUEST_SEQUENCE_OFFSET
                atomics.get_and_add_int(sequence, 1)
                atomics.futex_wake_all(sequence)
                return seen
            if state in (ES.RESTORE_WANTED, ES.RESTORING):
                return seen
            # Changed under us (restored, deleted): look again.

    def restore_failure(self, entry):
        """``(kind, reason)`` of the daemon's failure record of the spilled entry ``(slot, generation)``, or None
        (Java's RestoreFailures.find: a seqlock read of each record, bounds-checked)."""
        base = self.mapping.base
        mm = self.mapping.mm
        slot, generation = entry
        for i in range(H.RESTORE_FAILURES):
            record = H.RESTORE_FAILURES_OFFSET + i * RF.LENGTH
            for _ in range(100):
                before = atomics.get_long_acquire(base + record + RF.SEQUENCE_OFFSET)
                if before == 0 or before & 1:
                    break
                r_slot, r_generation, kind, length = _FAILURE.unpack_from(mm, record + RF.SLOT_OFFSET)
                reason = bytes(mm[record + RF.REASON_OFFSET:record + RF.REASON_OFFSET + min(length, RF.REASON_MAX)])
                if atomics.get_long_acquire(base + record + RF.SEQUENCE_OFFSET) != before:
                    continue
                if (r_slot, r_generation) != (slot, generation) or kind not in (RF.KIND_LOST, RF.KIND_NO_ROOM):
                    break
                if length > RF.REASON_MAX:
                    raise StoreFormatError("restore failure record %d of %s is corrupt: reason length %d exceeds its "
                                           "capacity of %d bytes; run `depot doctor`"
                                           % (i, self.mapping.path, length, RF.REASON_MAX))
                return kind, reason.decode("utf-8", "replace")
        return None

    def check_restore(self, raw, entry, still_spilled, no_room_ends):
        """Raises when the daemon lost the spilled entry ``entry`` of ``raw`` (ObjectLostError), or, with
        ``no_room_ends``, when it had no room to restore it (StoreFullError). False when the entry is gone
        without a failure (``still_spilled`` false: deleted), True while its restore may still come."""
        failure = self.restore_failure(entry)
        if failure is not None:
            kind, reason = failure
            if kind == RF.KIND_LOST or (still_spilled and no_room_ends):
                message = "object %s could not be restored from the spill directory %s: %s" % (
                    raw.hex(), self.spill_directory(), reason)
                if kind == RF.KIND_LOST:
                    raise ObjectLostError(message + "; the object is lost (the daemon dropped it): put it again")
                raise StoreFullError(message)
        return still_spilled

    def spill_directory(self):
        """The daemon's spill directory as published in the header, or None."""
        length = atomics.get_int_acquire(self.mapping.base + H.SPILL_DIRECTORY_LENGTH_OFFSET)
        if not 0 < length <= H.SPILL_DIRECTORY_MAX:
            return None
        return bytes(self.mapping.read(H.SPILL_DIRECTORY_OFFSET, length)).decode("utf-8", "replace")

    # ---- waiting for a seal ------------------------------------------------------------------------------

    def get(self, raw, deadline_ns):
        """Pins the object, waiting until ``deadline_ns`` (``time.monotonic_ns()``; None: forever, 0: no wait)
        for it to be sealed. None when it is still missing then. A spilled object is restored by the daemon
        within the same deadline (with 0, up to Java's ``Store.SPILL_WAIT_NANOS``); a restore that the daemon
        reports failed raises at once (ObjectLostError), or, when it found no room, StoreFullError at the
        deadline (at once with 0)."""
        native = self.slot.native
        located = self._try_pin_native(native, raw) if native is not None else self.try_pin(raw)
        if located is not None:
            return located
        home = self.home_of(raw)
        spilled = self.request_restore(raw)
        no_wait = deadline_ns == 0
        if spilled is not None:
            self.check_restore(raw, spilled, True, no_wait)
            if no_wait:
                deadline_ns = time.monotonic_ns() + Store.SPILL_WAIT_NANOS
        elif no_wait:
            return None
        # The id's futex word, chosen by its home slot on both sides (Store.sealWaiter).
        word = self._futex_words + (home & (H.FUTEX_BUCKETS - 1)) * 4
        with FutexWaiter(word, self._count_seal_waiter, _SPIN_NANOS, deadline_ns) as wait:
            while True:
                # Read before looking: a seal after the look changes it, so the wait below cannot miss it.
                sequence = wait.sequence()
                located = self.try_pin(raw, home)
                if located is not None:
                    return located
                current = self.request_restore(raw)
                if current is not None or spilled is not None:
                    # A restore that failed ends the wait (its record is written before the wake-up that brings
                    # us here).
                    entry = current if current is not None else spilled
                    spilled = entry if self.check_restore(raw, entry, current is not None, no_wait) else None
                if wait.pause(sequence) is EXPIRED:
                    if spilled is not None:
                        self.check_restore(raw, spilled, True, True)
                    return None

    def _count_seal_waiter(self, delta):
        """The seal waiters' count (Dekker with the sealer, who bumps the word and then reads it); a get's first
        count adds to this client's waits."""
        if delta > 0:
            atomics.get_and_add_long(self.slot.address + CT.WAITS_OFFSET, 1)
        atomics.get_and_add_int(self._futex_waiters, delta)
