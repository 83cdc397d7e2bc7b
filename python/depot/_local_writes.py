"""Creates, seals and aborts without the socket: what Java's ``Store.create``/``seal``/``abort`` do, from Python.

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

A seal is lock-free: a CAS of the entry's state word from CREATING (ours, this generation) to SEALED, an event
to subscribers, then a bump of the id's futex word and a wake-up when someone waits (Dekker with the getter,
which counts itself in FUTEX_WAITERS and re-checks before sleeping), and a bump of the space sequence when a
create that may evict waits (a sealed object is evictable).
"""

import struct
import time

from . import _atomics as atomics
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
        self._allocator = HeapAllocator(mapping)
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
            now = time.time_ns() // 1_000_000
            _FIELDS.pack_into(mm, entry + IE.METADATA_LENGTH_OFFSET, len(metadata), block, size, now, now)
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

    def _creating_word(self, created):
        return state_word(created.generation, self._client, ES.CREATING, created.flags)

    def seal(self, created, raw, size, metadata_length):
        """Seals what ``try_create`` made: visible and immutable from now on, and waiters wake. Lock-free."""
        at = self._entries + created.index_slot * IE.ENTRY_LENGTH + IE.STATE_WORD_OFFSET
        creating = self._creating_word(created)
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
        if atomics.get_int_volatile(base + H.EVICTING_SPACE_WAITERS_OFFSET) > 0:
            self._space_may_have_freed()

    def _space_may_have_freed(self):
        base = self._base
        atomics.get_and_add_int(base + H.SPACE_SEQUENCE_OFFSET, 1)
        if atomics.get_int_volatile(base + H.SPACE_WAITERS_OFFSET) > 0:
            atomics.futex_wake_all(base + H.SPACE_SEQUENCE_OFFSET)

    def abort(self, created):
        """Frees what ``try_create`` made and was not sealed. Waits for the lock (StoreBusyError when a live
        holder keeps it for seconds)."""
        self._lock.acquire()
        try:
            index_slot = created.index_slot
            if self._state_word_acquire(index_slot) != self._creating_word(created):
                raise StoreFormatError("cannot abort the object in index slot %d: it is not being created by this "
                                       "client" % index_slot)
            entry = self._entries_offset + index_slot * IE.ENTRY_LENGTH
            _, block, _ = _BLOCK_AND_LENGTHS.unpack_from(self._mm, entry + IE.METADATA_LENGTH_OFFSET)
            if created.flags & IE.FLAG_KEEP:
                self._add_counter(H.KEPT_BYTES_OFFSET, -self._allocator.block_size(block))
                self._add_counter(H.KEPT_OBJECTS_OFFSET, -1)
            self._allocator.free(block)
            self._remove(index_slot)
            self._add_counter(H.OBJECT_COUNT_OFFSET, -1)
            # The space sequence is bumped under the lock (a waiting create reads it under the lock) ...
            atomics.get_and_add_int(self._base + H.SPACE_SEQUENCE_OFFSET, 1)
        finally:
            self._lock.release()
        # ... and its sleepers are woken after the release, as Java does: woken under it, they would only sleep
        # again on the lock.
        if atomics.get_int_volatile(self._base + H.SPACE_WAITERS_OFFSET) > 0:
            atomics.futex_wake_all(self._base + H.SPACE_SEQUENCE_OFFSET)
