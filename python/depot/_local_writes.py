"""Creates, seals, aborts and deletes without the socket: what Java's ``Store.create``/``seal``/``abort`` and
``Deletion`` do, from Python.

A create takes the allocator lock (``_alloc_lock``), checks that no live entry has the id, allocates a block
(``_allocator``), writes the metadata after the data, inserts a CREATING entry owned by this client slot into
the index (fields first, then the state word with a release store: lock-free readers acquire it before
reading them), records the block's owner, counts the object, and releases the lock. Only the common case is
done here: when the lock is not free within a short spin, when the heap has no room without evicting, when the
index is full, or when the lock waits for a rebuild, ``try_create`` returns None and the client asks the
daemon, which evicts, waits for room, spills and repairs as Java does. So everything Python writes under the
lock is a complete, ordinary Java state, and a Python process killed anywhere leaves what Java's recovery and
reaper already handle: a lock naming a dead slot (the heap is rebuilt from the index) and CREATING entries
owned by a dead slot (freed when the daemon reaps the slot).

With the C extension (``depot._accel``) the steps under the lock are one call, ``_native.Slot.create``, on the same
structures in the same order; without it, they are the Python below.

A seal is lock-free: a CAS of the entry's state word from CREATING (ours, this generation) to SEALED, an event
to subscribers, then a bump of the id's futex word and a wake-up when someone waits (Dekker with the getter,
which counts itself in FUTEX_WAITERS and re-checks before sleeping), and a bump of the space sequence when a
create that may evict waits (a sealed object is evictable).

A delete follows Java's ``Deletion`` step by step, so that every state it leaves is one Java's recovery knows:
a CAS of the entry from SEALED to DELETING owned by this slot (from then on no new pin succeeds: a pinner
re-reads the state after publishing its record); the DELETED event; a scan of every pin record. No pin: the
block is freed under the lock. Some pin (or a busy lock): a CAS to DELETE_PENDING, counted, and, pinned, a second
scan, so that an unpinner that cleared its record between the two and saw DELETING cannot leave the delete to
nobody. The last unpinner, Java or Python (``ClientSlot.unpin`` calls ``finish_pending_delete``), or the
daemon's sweep finishes a DELETE_PENDING entry. A process killed in between leaves DELETING naming a dead slot
(the reaper makes it DELETE_PENDING) or DELETE_PENDING (the sweep finishes it). What is not a sealed object here
(spilled, being evicted, missing) goes to the daemon, which waits for evictions and deletes spill files.
"""

import struct
import time

from . import _atomics as atomics
from . import _space as space
from ._alloc_lock import AllocationLock
from ._allocator import NONE, HeapAllocator, block_size_for
from ._events import EventPublisher
from ._layout import ClientTableDescriptor as CT
from ._layout import EntryState as ES
from ._layout import EventRecordDescriptor as ER
from ._layout import HeapBlockDescriptor as HB
from ._layout import IndexEntryDescriptor as IE
from ._layout import StoreHeaderDescriptor as H
from .errors import ObjectExistsError, StoreFormatError
from .ids import ObjectId

# metadata length (u32), block offset, data length, create time, last access: the entry after its id
_FIELDS = struct.Struct("<IQQqq")
assert (IE.BLOCK_OFFSET_OFFSET == IE.METADATA_LENGTH_OFFSET + 4 and IE.DATA_LENGTH_OFFSET == IE.BLOCK_OFFSET_OFFSET + 8
        and IE.CREATE_TIME_OFFSET == IE.DATA_LENGTH_OFFSET + 8 and IE.LAST_ACCESS_OFFSET == IE.CREATE_TIME_OFFSET + 8
        and IE.METADATA_LENGTH_OFFSET == IE.ID_OFFSET + IE.ID_LENGTH), "entry fields moved: update _FIELDS"
_BLOCK_AND_LENGTHS = struct.Struct("<IQQ")
_I64 = struct.Struct("<q")
_MASK32 = 0xFFFFFFFF
# States of a live entry whose id blocks a create of the same id (Java's ObjectIndex.findBlocking).
_NOT_BLOCKING = (ES.TOMBSTONE, ES.DELETING, ES.DELETE_PENDING)
_KNOWN_STATES = frozenset(v for k, v in vars(ES).items() if k.isupper())
# how often a delete looks again when the entry changed under it (Java loops; here the daemon takes over after)
_DELETE_ATTEMPTS = 64
_U64 = struct.Struct("<Q")


def with_state(word, owner, state):
    """Java's IndexEntryDescriptor.withState: the same generation and flags, another owner and state."""
    return state_word(word >> IE.GENERATION_SHIFT, owner, state, (word >> IE.FLAGS_SHIFT) & IE.FLAGS_MASK)


def state_word(generation, owner, state, flags=0):
    return ((generation & _MASK32) << IE.GENERATION_SHIFT | (flags & IE.FLAGS_MASK) << IE.FLAGS_SHIFT
            | (owner & IE.OWNER_MASK) << IE.OWNER_SHIFT | state)


class LocalCreate:
    """What ``try_create`` made: the entry (``index_slot``, ``generation``), its flags and where the data lies."""

    __slots__ = ("index_slot", "generation", "flags", "data_offset", "metadata_length", "home")

    def __init__(self, index_slot, generation, flags, data_offset, metadata_length, home):
        self.index_slot = index_slot
        self.generation = generation
        self.flags = flags
        self.data_offset = data_offset
        self.metadata_length = metadata_length
        self.home = home


class LocalWrites:
    """Socket-free creates, seals and aborts of one client slot on one mapping."""

    def __init__(self, mapping, slot, reader):
        self._mapping = mapping
        self._mm = mapping.mm
        self._base = mapping.base
        self._client = slot.index
        self._slot_address = slot.address
        self._reader = reader
        self._entries = mapping.base + mapping.index_offset
        self._entries_offset = mapping.index_offset
        self._mask = mapping.index_slots - 1
        self._max_probe = min(mapping.index_slots, IE.MAX_PROBE)
        self._max_objects = mapping.index_slots - (mapping.index_slots >> 2)
        self._lock = AllocationLock(mapping, self._client)
        #: the C extension's Slot (``probe_for_create``, and the allocator's ``allocate``), or None: Python
        self._native = slot.native
        self._allocator = HeapAllocator(mapping, slot.native)
        self._events = EventPublisher(mapping, self._client)

    # ---- the index (under the lock) -------------------------------------------------------------------

    def _state_word_acquire(self, index_slot):
        word = atomics.get_long_acquire(self._entries + index_slot * IE.ENTRY_LENGTH + IE.STATE_WORD_OFFSET)
        if word & 0xFF not in _KNOWN_STATES:
            raise StoreFormatError("index slot %d of %s is corrupt: unknown state code %d; run `depot doctor` to drop"
                                   " the entry" % (index_slot, self._mapping.path, word & 0xFF))
        return word

    def _id_at(self, index_slot):
        at = self._entries_offset + index_slot * IE.ENTRY_LENGTH + IE.ID_OFFSET
        return self._mm[at:at + IE.ID_LENGTH]

    def _find_blocking_or_free(self, raw, home):
        """``(blocking slot or -1, first free slot or -1)`` on the id's probe chain (Java's findBlocking and
        hasRoomFor in one walk)."""
        free = -1
        slot = home
        for _ in range(self._max_probe):
            word = self._state_word_acquire(slot)
            state = word & 0xFF
            if state == ES.EMPTY:
                return -1, slot if free < 0 else free
            if state == ES.TOMBSTONE:
                if free < 0:
                    free = slot
            elif state not in _NOT_BLOCKING and self._id_at(slot) == raw:
                return slot, free
            slot = (slot + 1) & self._mask
        return -1, free

    def _remove(self, index_slot):
        """Java's ObjectIndex.remove: a tombstone (same generation), then trailing tombstones before an EMPTY
        slot back to EMPTY, so probe chains do not grow forever."""
        generation = self._state_word_acquire(index_slot) >> IE.GENERATION_SHIFT
        self._put_state_word_release(index_slot, state_word(generation, 0, ES.TOMBSTONE))
        if self._state_word_acquire((index_slot + 1) & self._mask) & 0xFF != ES.EMPTY:
            return
        s = index_slot
        for _ in range(self._mask + 1):
            word = self._state_word_acquire(s)
            if word & 0xFF != ES.TOMBSTONE:
                break
            self._put_state_word_release(s, state_word(word >> IE.GENERATION_SHIFT, 0, ES.EMPTY))
            s = (s - 1) & self._mask

    def _put_state_word_release(self, index_slot, word):
        atomics.put_long_release(self._entries + index_slot * IE.ENTRY_LENGTH + IE.STATE_WORD_OFFSET, word)

    def _add_counter(self, offset, delta):
        atomics.get_and_add_long(self._base + offset, delta)

    # ---- create, seal, abort --------------------------------------------------------------------------

    def try_create(self, raw, size, metadata, keep):
        """Creates a CREATING entry for id ``raw`` with ``size`` bytes of data and ``metadata`` after them: a
        ``LocalCreate``, or None when only the daemon can make room (or the lock is busy). Raises
        ObjectExistsError."""
        block_size = block_size_for(size, len(metadata))
        if block_size > self._mapping.heap_length:
            return None  # the daemon words the error
        native = self._native
        if native is not None:
            return self._try_create_native(native, raw, size, metadata, keep, block_size)
        home = self._reader.home_of(raw)
        lock = self._lock
        if not lock.try_acquire():
            return None
        try:
            blocking, free = self._find_blocking_or_free(raw, home)
            if blocking >= 0:
                raise ObjectExistsError("object %s exists already; ids are write-once: delete it first or use another"
                                        " id" % ObjectId(raw))
            mm = self._mm
            if free < 0 or _I64.unpack_from(mm, H.OBJECT_COUNT_OFFSET)[0] >= self._max_objects:
                return None  # the index is full: the daemon evicts or explains
            block = self._allocator.allocate(block_size)
            if block == NONE:
                return None  # no room without evicting, waiting or spilling: the daemon's job
            data_offset = self._mapping.heap_offset + block + HB.HEADER_LENGTH
            if metadata:
                mm[data_offset + size:data_offset + size + len(metadata)] = metadata
            generation = ((self._state_word_acquire(free) >> IE.GENERATION_SHIFT) + 1) & _MASK32
            entry = self._entries_offset + free * IE.ENTRY_LENGTH
            mm[entry + IE.ID_OFFSET:entry + IE.ID_OFFSET + IE.ID_LENGTH] = raw
            now = time.time_ns() // 1000
            # created (epoch ms) and last used (epoch µs), as Java's ObjectIndex.insert
            _FIELDS.pack_into(mm, entry + IE.METADATA_LENGTH_OFFSET, len(metadata), block, size, now // 1000, now)
            flags = IE.FLAG_KEEP if keep else 0
            # Publishes the fields above to lock-free readers, who acquire the state word before reading them.
            self._put_state_word_release(free, state_word(generation, self._client, ES.CREATING, flags))
            self._allocator.set_owner(block, free)
            self._add_counter(H.OBJECT_COUNT_OFFSET, 1)
            if keep:
                self._add_counter(H.KEPT_BYTES_OFFSET, block_size)
                self._add_counter(H.KEPT_OBJECTS_OFFSET, 1)
        finally:
            lock.release()
        atomics.get_and_add_long(self._slot_address + CT.CREATES_OFFSET, 1)
        return LocalCreate(free, generation, flags, data_offset, len(metadata), home)

    def _try_create_native(self, native, raw, size, metadata, keep, block_size):
        """``try_create`` with everything under the lock in one C call (``_native.Slot.create``: the same steps on
        the same structures, each offset it reads checked against the heap)."""
        if type(metadata) is not bytes:
            metadata = bytes(metadata)
        lock = self._lock
        if not lock.try_acquire():
            return None
        try:
            made = native.create(raw, size, metadata, block_size, keep, self._client, self._max_objects,
                                 self._allocator.small_limit)
        finally:
            lock.release()
        if made is None:
            return None  # the index or the heap is full: the daemon evicts, waits or explains
        if made is False:
            raise ObjectExistsError("object %s exists already; ids are write-once: delete it first or use another id"
                                    % ObjectId(raw))
        free, generation, data_offset, home = made
        atomics.get_and_add_long(self._slot_address + CT.CREATES_OFFSET, 1)
        return LocalCreate(free, generation, IE.FLAG_KEEP if keep else 0, data_offset, len(metadata), home)

    def _creating_word(self, created):
        return state_word(created.generation, self._client, ES.CREATING, created.flags)

    def seal(self, created, raw, size, metadata_length):
        """Seals what ``try_create`` made: visible and immutable from now on, and waiters wake. Lock-free."""
        at = self._entries + created.index_slot * IE.ENTRY_LENGTH + IE.STATE_WORD_OFFSET
        creating = self._creating_word(created)
        # The seal is the object's first use (for eviction); the CAS below publishes it with the data.
        atomics.put_long_opaque(self._entries + created.index_slot * IE.ENTRY_LENGTH + IE.LAST_ACCESS_OFFSET,
                                time.time_ns() // 1000)
        if not atomics.compare_and_set_long(at, creating, state_word(created.generation, 0, ES.SEALED, created.flags)):
            raise StoreFormatError("cannot seal object %s in index slot %d: it is no longer being created by this "
                                   "client (state word 0x%x)" % (ObjectId(raw), created.index_slot,
                                                                 atomics.get_long_volatile(at)))
        if self._events.anyone_listens():
            self._events.publish(ER.TYPE_SEALED, raw, size, metadata_length)
        base = self._base
        word = base + H.FUTEX_WORDS_OFFSET + (created.home & (H.FUTEX_BUCKETS - 1)) * 4
        atomics.get_and_add_int(word, 1)
        # Dekker with a waiting get: it counts itself, then re-checks; we bumped the word, then read the count.
        if atomics.get_int_volatile(base + H.FUTEX_WAITERS_OFFSET) > 0:
            atomics.futex_wake_all(word)
            atomics.get_and_add_long(self._slot_address + CT.WAKEUPS_OFFSET, 1)
        space.object_became_evictable(base)

    def abort(self, created):
        """Frees what ``try_create`` made and was not sealed. Waits for the lock (StoreBusyError when a live
        holder keeps it for seconds)."""
        self._lock.acquire()
        try:
            index_slot = created.index_slot
            if self._state_word_acquire(index_slot) != self._creating_word(created):
                raise StoreFormatError("cannot abort the object in index slot %d: it is not being created by this "
                                       "client" % index_slot)
            self._free_entry_under_lock(index_slot, created.flags & IE.FLAG_KEEP)
        finally:
            self._lock.release()
        space.wake_waiters(self._base)

    def _free_entry_under_lock(self, index_slot, kept):
        """Java's HeapLock.freeEntryUnderLock for an entry with a block: the block freed, the entry removed, the
        counts updated, and the space sequence bumped under the lock (a waiting create reads it under the lock);
        its sleepers are woken after the release (``_space.wake_waiters``)."""
        entry = self._entries_offset + index_slot * IE.ENTRY_LENGTH
        _, block, _ = _BLOCK_AND_LENGTHS.unpack_from(self._mm, entry + IE.METADATA_LENGTH_OFFSET)
        if kept:
            self._add_counter(H.KEPT_BYTES_OFFSET, -self._allocator.block_size(block))
            self._add_counter(H.KEPT_OBJECTS_OFFSET, -1)
        self._allocator.free(block)  # checks the offset read from the entry against the heap
        self._remove(index_slot)
        self._add_counter(H.OBJECT_COUNT_OFFSET, -1)
        space.bump_under_lock(self._base)

    # ---- delete ---------------------------------------------------------------------------------------

    def delete(self, raw):
        """Deletes the sealed object with id ``raw``: True once it is deleted (its block freed now, or by the last
        unpinner), None when the daemon must do it (no sealed entry with this id here: spilled or missing; or an
        eviction holds it). Never waits for the lock when this thread holds it (a finaliser run by a garbage
        collection inside a create): the delete is then left DELETE_PENDING, for the daemon's sweep."""
        reader = self._reader
        home = reader.home_of(raw)
        for _ in range(_DELETE_ATTEMPTS):
            found = reader.find_sealed(raw, home)
            if found is None:
                return None
            index_slot, generation = found
            word = self._state_word_volatile(index_slot)
            if word >> IE.GENERATION_SHIFT != generation or self._id_at(index_slot) != raw:
                continue  # the slot was reused since the lookup
            state = word & 0xFF
            if state == ES.EVICTING:
                return None  # the daemon waits for the eviction to end
            if state != ES.SEALED:
                continue
            deleting = with_state(word, self._client, ES.DELETING)
            if not self._compare_and_set_state_word(index_slot, word, deleting):
                continue
            # Ours now: its fields stay as they are until we free it.
            if self._events.anyone_listens():
                metadata_length, _, data_length = _BLOCK_AND_LENGTHS.unpack_from(
                    self._mm, self._entries_offset + index_slot * IE.ENTRY_LENGTH + IE.METADATA_LENGTH_OFFSET)
                self._events.publish(ER.TYPE_DELETED, raw, data_length, metadata_length)
            self._finish_or_defer(index_slot, deleting, in_finaliser=False)
            atomics.get_and_add_long(self._slot_address + CT.DELETES_OFFSET, 1)
            return True
        return None

    def finish_pending_delete(self, index_slot, pending):
        """Called by an unpinner that saw the entry DELETE_PENDING (``pending``, its state word) after clearing its
        record: finishes the delete if no pin is left (Java's tryFinishDelete). Safe in a finaliser: it never
        waits for the lock (a busy lock leaves the delete to the daemon's sweep)."""
        deleting = with_state(pending, self._client, ES.DELETING)
        if self._compare_and_set_state_word(index_slot, pending, deleting):
            self._add_counter(H.PENDING_DELETES_OFFSET, -1)
            self._finish_or_defer(index_slot, deleting, in_finaliser=True)

    def _finish_or_defer(self, index_slot, deleting, in_finaliser):
        """With the entry DELETING (``deleting``) and ours: freed now when nothing pins it and the lock is free,
        else DELETE_PENDING."""
        record = (index_slot + 1) << 32 | deleting >> IE.GENERATION_SHIFT
        pinned = self._is_pinned(record)
        if not pinned and self._free_if_unchanged(index_slot, deleting, in_finaliser):
            return
        pending = with_state(deleting, 0, ES.DELETE_PENDING)
        if self._compare_and_set_state_word(index_slot, deleting, pending):
            self._add_counter(H.PENDING_DELETES_OFFSET, 1)
            # Dekker with unpin, which clears its record (volatile) and then loads the state (volatile): an
            # unpinner that ran between our scan and our CAS saw DELETING and left the delete to us. Scanning
            # again after publishing DELETE_PENDING means one of us always sees the other. (Unpinned but with the
            # lock busy, the daemon's sweep finishes it.)
            if pinned and not self._is_pinned(record):
                self.finish_pending_delete(index_slot, pending)

    def _free_if_unchanged(self, index_slot, deleting, in_finaliser):
        """Frees the entry under the lock if it is still ``deleting``; False when the lock could not be taken (held
        by another process past a short spin, by this thread, or, ``in_finaliser``, by another thread)."""
        if not self._lock.try_acquire(wait_local=not in_finaliser):
            return False
        try:
            if self._state_word_acquire(index_slot) == deleting:
                self._free_entry_under_lock(index_slot, deleting >> IE.FLAGS_SHIFT & IE.FLAG_KEEP)
        finally:
            self._lock.release()
        space.wake_waiters(self._base)
        return True

    def _is_pinned(self, record):
        """Whether any registered client holds a pin record equal to ``record`` (Java's ClientTable.isPinned).
        The identity and high-water loads come after our CAS of the entry (a full barrier on x86-64), so the
        record loads (a search of each client's records up to its high-water mark) come after both. The identity
        words of all slots are first read in one strided copy, so that a table of a thousand slots with a few
        registered costs a few ctypes calls, not a thousand; each registered slot is then read again volatile."""
        m = self._mapping
        mm = self._mm
        needle = _U64.pack(record)
        table = m.client_table_offset + CT.IDENTITY_OFFSET
        with memoryview(mm) as whole, whole[table:table + m.max_clients * m.slot_length] as span, \
                span.cast("Q") as words, words[::m.slot_length // 8] as identities:
            registered = [c for c, identity in enumerate(identities.tolist()) if identity != 0]
        for client in registered:
            slot = m.client_table_offset + client * m.slot_length
            if atomics.get_long_volatile(self._base + slot + CT.IDENTITY_OFFSET) == 0:
                continue
            high_water = min(atomics.get_int_acquire(self._base + slot + CT.PIN_HIGH_WATER_OFFSET), m.pins_per_client)
            start = slot + CT.PIN_RECORDS_OFFSET
            end = start + high_water * CT.PIN_RECORD_LENGTH
            at = mm.find(needle, start, end)
            while at >= 0:
                if (at - start) % CT.PIN_RECORD_LENGTH == 0:
                    return True
                at = mm.find(needle, at + 1, end)
        return False

    def _state_word_volatile(self, index_slot):
        return atomics.get_long_volatile(self._entries + index_slot * IE.ENTRY_LENGTH + IE.STATE_WORD_OFFSET)

    def _compare_and_set_state_word(self, index_slot, expected, value):
        return atomics.compare_and_set_long(self._entries + index_slot * IE.ENTRY_LENGTH + IE.STATE_WORD_OFFSET,
                                            expected, value)
