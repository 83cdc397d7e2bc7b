"""The heap allocator, as Java's ``dev.depot.core.heap.HeapAllocator`` (boundary tags, one free list per power of two).

Python allocates and frees exactly as Java does, on the same block headers and free lists
(``HeapBlockDescriptor`` draws a block), so Java and Python creates can interleave on one heap. Every method
runs under the allocator lock (``_alloc_lock``), whose acquire and release order these plain reads and writes
of the mapping between processes; so a struct read or write is enough here. Everything here is derived state:
a process killed half-way leaves the lock naming a dead holder, and the next holder (the daemon's reaper, or
any Java client) rebuilds the heap from the object index.

Allocation takes the first fit in the size's own bin (bounded scan), else the first block of any larger bin,
else (no larger block exists) the first fit anywhere in its own bin, and splits off the rest: small blocks
(below 1/256 of the heap, at least 64 KiB) from the top of the heap, large ones from the bottom. The Java class
says why. With the C extension, ``allocate`` runs the same steps in C (``_native.Slot.allocate``; tests/
test_native.py checks that both leave the same heap).
"""

import struct

from . import _atomics as atomics
from ._layout import HeapAllocator as HA
from ._layout import HeapBlockDescriptor as HB
from ._layout import StoreHeaderDescriptor as H
from .errors import StoreFormatError

NONE = -1
_I64 = struct.Struct("<q")
_BINS = struct.Struct("<%dq" % H.FREE_BINS)
_TWO = struct.Struct("<qq")
assert (HB.PREV_SIZE_OFFSET == HB.SIZE_OFFSET + 8
        and HB.PREV_FREE_OFFSET == HB.NEXT_FREE_OFFSET + 8), "heap block fields moved: update _TWO"


def bin_of(size):
    """Free-list bin of a block size: floor(log2(size))."""
    return size.bit_length() - 1


def block_size_for(data_length, metadata_length):
    """Size of the block that holds an object with this much data and metadata (HeapBlockDescriptor.blockSizeFor)."""
    raw = HB.HEADER_LENGTH + data_length + metadata_length
    return (raw + HB.ALIGNMENT - 1) & -HB.ALIGNMENT


class HeapAllocator:
    """The allocator over one mapping's heap. Offsets are heap offsets (0 = the first block)."""

    def __init__(self, mapping, native=None):
        #: the C extension's ``Slot`` on this mapping, which allocates in one call (``native/heap.c``), or None
        self._native = native
        self._mm = mapping.mm
        self._heap = mapping.heap_offset
        self._length = mapping.heap_length
        self._used = mapping.base + H.USED_BYTES_OFFSET
        self.small_limit = max(HA.SMALL_LIMIT_MIN, self._length >> HA.SMALL_LIMIT_SHIFT)

    # ---- field access (plain: under the lock) -------------------------------------------------------------

    def _get(self, offset, field):
        return _I64.unpack_from(self._mm, self._heap + offset + field)[0]

    def _set(self, offset, field, value):
        _I64.pack_into(self._mm, self._heap + offset + field, value)

    def _head(self, bin):
        return _I64.unpack_from(self._mm, H.FREE_BINS_OFFSET + bin * 8)[0]

    def _set_head(self, bin, offset):
        _I64.pack_into(self._mm, H.FREE_BINS_OFFSET + bin * 8, offset)

    def block_size(self, offset):
        """Size of the block at ``offset``, checked against the heap."""
        size = self._get(offset, HB.SIZE_OFFSET) & ~HB.FREE_BIT
        if size <= 0 or offset < 0 or offset + size > self._length:
            raise StoreFormatError("heap block at %d has size %d, outside the %d-byte heap; run `depot doctor`"
                                   % (offset, size, self._length))
        return size

    def _is_free(self, offset):
        return self._get(offset, HB.SIZE_OFFSET) & HB.FREE_BIT != 0

    def _prev_size(self, offset):
        p = self._get(offset, HB.PREV_SIZE_OFFSET)
        if p < 0 or p > offset:
            raise StoreFormatError("heap block at %d records a previous block of %d bytes, before the heap's start; run"
                                   " `depot doctor`" % (offset, p))
        return p

    def _next_free(self, offset):
        return self._get(offset, HB.NEXT_FREE_OFFSET)

    def _write_block(self, offset, size, free, prev_size):
        _TWO.pack_into(self._mm, self._heap + offset + HB.SIZE_OFFSET, size | (HB.FREE_BIT if free else 0), prev_size)

    def _set_prev_size_of_next(self, offset, size):
        nxt = offset + size
        if nxt < self._length:
            self._set(nxt, HB.PREV_SIZE_OFFSET, size)

    def _push_free(self, offset, size):
        bin = bin_of(size)
        old = self._head(bin)
        _TWO.pack_into(self._mm, self._heap + offset + HB.NEXT_FREE_OFFSET, old, NONE)
        if old != NONE:
            self._set(old, HB.PREV_FREE_OFFSET, offset)
        self._set_head(bin, offset)

    def _unlink(self, offset, size):
        nxt, prev = _TWO.unpack_from(self._mm, self._heap + offset + HB.NEXT_FREE_OFFSET)
        if prev == NONE:
            self._set_head(bin_of(size), nxt)
        else:
            self._set(prev, HB.NEXT_FREE_OFFSET, nxt)
        if nxt != NONE:
            self._set(nxt, HB.PREV_FREE_OFFSET, prev)

    def _add_used(self, delta):
        used = _I64.unpack_from(self._mm, H.USED_BYTES_OFFSET)[0]
        # Release: lock-free readers (`depot stat`) read it with an acquire load.
        atomics.put_long_release(self._used, (used + delta) & 0xFFFFFFFFFFFFFFFF)

    # ---- allocate and free ------------------------------------------------------------------------------

    def allocate(self, size):
        """A block of exactly ``size`` bytes or more (a multiple of 64): its offset, or -1 when none fits."""
        if self._native is not None:
            return self._native.allocate(size, self.small_limit)  # the same steps, in C
        if size <= 0 or size > self._length or size & (HB.ALIGNMENT - 1):
            return NONE
        small = size < self.small_limit
        bin = bin_of(size)
        limit = HA.FIRST_FIT_SCAN_LIMIT
        heads = _BINS.unpack_from(self._mm, H.FREE_BINS_OFFSET)
        found = NONE
        scanned = 0
        b = heads[bin]
        while b != NONE and scanned < limit:
            if self.block_size(b) >= size and (found == NONE or small == (b > found)):
                found = b
            b = self._next_free(b)
            scanned += 1
        higher = bin + 1
        while found == NONE and higher < H.FREE_BINS:
            seen = 0
            b = heads[higher]
            while b != NONE and seen < limit:
                if found == NONE or small == (b > found):
                    found = b
                b = self._next_free(b)
                seen += 1
            higher += 1
        if found == NONE and scanned == limit:
            # No larger block anywhere: a fit deeper in this bin is the only one left, so look at all of it.
            b = heads[bin]
            while b != NONE:
                if self.block_size(b) >= size:
                    found = b
                    break
                b = self._next_free(b)
        if found == NONE:
            return NONE
        have = self.block_size(found)
        self._unlink(found, have)
        rest = have - size
        if rest < HA.MIN_SPLIT:
            self._write_block(found, have, False, self._prev_size(found))
            self._add_used(have)
            return found
        self._add_used(size)
        if small:
            # The rest stays a free block where the old one started; the new block is its upper end.
            block = found + rest
            self._write_block(found, rest, True, self._prev_size(found))
            self._push_free(found, rest)
            self._write_block(block, size, False, rest)
            self._set_prev_size_of_next(block, size)
            return block
        self._write_block(found, size, False, self._prev_size(found))
        self._write_block(found + size, rest, True, size)
        self._set_prev_size_of_next(found + size, rest)
        self._push_free(found + size, rest)
        return found

    def free(self, offset):
        """Frees the allocated block at ``offset``, coalescing with free neighbours."""
        if offset < 0 or offset >= self._length or offset & (HB.ALIGNMENT - 1):
            raise StoreFormatError("heap block offset %d is not a 64-byte aligned offset below %d"
                                   % (offset, self._length))
        size = self.block_size(offset)
        if self._is_free(offset):
            raise StoreFormatError("double free of heap block at %d (size %d)" % (offset, size))
        self._add_used(-size)
        start = offset
        length = size
        nxt = offset + size
        if nxt < self._length and self._is_free(nxt):
            next_size = self.block_size(nxt)
            self._unlink(nxt, next_size)
            length += next_size
        prev_size = self._prev_size(offset)
        if offset > 0 and self._is_free(offset - prev_size):
            start = offset - prev_size
            self._unlink(start, prev_size)
            length += prev_size
        self._write_block(start, length, True, 0 if start == 0 else self._prev_size(start))
        if start != offset:
            # Merged into its predecessor: its own header keeps the FREE bit too, so a second free is caught.
            self._set(offset, HB.SIZE_OFFSET, size | HB.FREE_BIT)
        self._set_prev_size_of_next(start, length)
        self._push_free(start, length)

    def set_owner(self, offset, index_slot):
        """Records which index slot owns the allocated block."""
        _I64.pack_into(self._mm, self._heap + offset + HB.OWNER_SLOT_OFFSET, index_slot)
