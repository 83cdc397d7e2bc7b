/*
 * The heap allocator, under the allocator lock, which orders these plain accesses between processes:
 * depot._allocator's HeapAllocator.allocate, step for step (and so Java's HeapAllocator.allocate), with every
 * block offset and size read from the heap checked against it before use.
 */
#include "native.h"

static int
heap_corrupt(Slot *s, const char *what, int64_t offset, int64_t value)
{
    PyErr_Format(StoreFormatError, "heap block at %lld of %U has %s %lld, outside the %llu-byte heap; run "
                 "`depot doctor`", (long long)offset, s->path, what, (long long)value,
                 (unsigned long long)s->heap_length);
    return -1;
}

/* a block offset that a header or the bins gave: the block's header must lie inside the heap */
static inline int
check_block(Slot *s, int64_t offset, const char *what, int64_t from)
{
    if (offset < 0 || (uint64_t)offset > s->heap_length - L.hb_header_length
        || (offset & (int64_t)(L.hb_alignment - 1)))
        return heap_corrupt(s, what, from, offset);
    return 0;
}

static inline char *
bin_head(Slot *s, int bin)
{
    return s->base + L.h_free_bins_offset + (uint64_t)bin * 8;
}

static inline int
bin_of(uint64_t size)
{
    return 63 - __builtin_clzll(size);
}

static int
block_size(Slot *s, int64_t offset, int64_t *out)
{
    int64_t size = get64(block_at(s, offset) + L.hb_size) & ~(int64_t)L.hb_free_bit;
    if (size <= 0 || (uint64_t)size > s->heap_length - (uint64_t)offset)
        return heap_corrupt(s, "size", offset, size);
    *out = size;
    return 0;
}

static int
next_free(Slot *s, int64_t offset, int64_t *out)
{
    int64_t next = get64(block_at(s, offset) + L.hb_next_free);
    if (next != NONE && check_block(s, next, "next free block", offset) < 0)
        return -1;
    *out = next;
    return 0;
}

static int
prev_size(Slot *s, int64_t offset, int64_t *out)
{
    int64_t p = get64(block_at(s, offset) + L.hb_prev_size);
    if (p < 0 || p > offset)
        return heap_corrupt(s, "previous block size", offset, p);
    *out = p;
    return 0;
}

static inline void
write_block(Slot *s, int64_t offset, int64_t size, int free, int64_t prev)
{
    set64(block_at(s, offset) + L.hb_size, size | (free ? (int64_t)L.hb_free_bit : 0));
    set64(block_at(s, offset) + L.hb_prev_size, prev);
}

static inline void
set_prev_size_of_next(Slot *s, int64_t offset, int64_t size)
{
    if ((uint64_t)(offset + size) < s->heap_length)
        set64(block_at(s, offset + size) + L.hb_prev_size, size);
}

static int
push_free(Slot *s, int64_t offset, int64_t size)
{
    int bin = bin_of((uint64_t)size);
    int64_t old = get64(bin_head(s, bin));
    if (old != NONE && check_block(s, old, "free-list head", offset) < 0)
        return -1;
    set64(block_at(s, offset) + L.hb_next_free, old);
    set64(block_at(s, offset) + L.hb_prev_free, NONE);
    if (old != NONE)
        set64(block_at(s, old) + L.hb_prev_free, offset);
    set64(bin_head(s, bin), offset);
    return 0;
}

static int
unlink_block(Slot *s, int64_t offset, int64_t size)
{
    int64_t next = get64(block_at(s, offset) + L.hb_next_free), prev = get64(block_at(s, offset) + L.hb_prev_free);
    if ((next != NONE && check_block(s, next, "next free block", offset) < 0)
        || (prev != NONE && check_block(s, prev, "previous free block", offset) < 0))
        return -1;
    if (prev == NONE)
        set64(bin_head(s, bin_of((uint64_t)size)), next);
    else
        set64(block_at(s, prev) + L.hb_next_free, next);
    if (next != NONE)
        set64(block_at(s, next) + L.hb_prev_free, prev);
    return 0;
}

static inline void
add_used(Slot *s, int64_t delta)
{
    uint64_t *used = (uint64_t *)(s->base + L.h_used_bytes);
    /* release: lock-free readers (`depot stat`) read it with an acquire load */
    __atomic_store_n(used, *used + (uint64_t)delta, __ATOMIC_RELEASE);
}

int64_t
allocate(Slot *s, int64_t size, int64_t small_limit)
{
    if (size <= 0 || (uint64_t)size > s->heap_length || (size & (int64_t)(L.hb_alignment - 1)))
        return NONE;
    int small = size < small_limit;
    int bin = bin_of((uint64_t)size);
    int64_t limit = (int64_t)L.ha_scan_limit, found = NONE, scanned = 0, b, have;
    b = get64(bin_head(s, bin));
    if (b != NONE && check_block(s, b, "free-list head", -1) < 0)
        return -2;
    while (b != NONE && scanned < limit) {
        if (block_size(s, b, &have) < 0)
            return -2;
        if (have >= size && (found == NONE || small == (b > found)))
            found = b;
        if (next_free(s, b, &b) < 0)
            return -2;
        scanned++;
    }
    for (int higher = bin + 1; found == NONE && higher < (int)L.h_free_bins; higher++) {
        int64_t seen = 0;
        b = get64(bin_head(s, higher));
        if (b != NONE && check_block(s, b, "free-list head", -1) < 0)
            return -2;
        while (b != NONE && seen < limit) {
            if (found == NONE || small == (b > found))
                found = b;
            if (next_free(s, b, &b) < 0)
                return -2;
            seen++;
        }
    }
    if (found == NONE && scanned == limit) {
        /* no larger block anywhere: a fit deeper in this bin is the only one left, so look at all of it */
        b = get64(bin_head(s, bin));
        for (uint64_t steps = 0; b != NONE; steps++) {
            if (steps > s->heap_length / L.hb_alignment)
                return heap_corrupt(s, "a free list longer than the heap's blocks at", b, (int64_t)steps), -2;
            if (block_size(s, b, &have) < 0)
                return -2;
            if (have >= size) {
                found = b;
                break;
            }
            if (next_free(s, b, &b) < 0)
                return -2;
        }
    }
    if (found == NONE)
        return NONE;
    int64_t before;
    if (block_size(s, found, &have) < 0 || unlink_block(s, found, have) < 0 || prev_size(s, found, &before) < 0)
        return -2;
    int64_t rest = have - size;
    if (rest < (int64_t)L.ha_min_split) {
        write_block(s, found, have, 0, before);
        add_used(s, have);
        return found;
    }
    add_used(s, size);
    if (small) {
        /* the rest stays a free block where the old one started; the new block is its upper end */
        int64_t block = found + rest;
        write_block(s, found, rest, 1, before);
        if (push_free(s, found, rest) < 0)
            return -2;
        write_block(s, block, size, 0, rest);
        set_prev_size_of_next(s, block, size);
        return block;
    }
    write_block(s, found, size, 0, before);
    write_block(s, found + size, rest, 1, size);
    set_prev_size_of_next(s, found + size, rest);
    if (push_free(s, found + size, rest) < 0)
        return -2;
    return found;
}

/* allocate(size, small_limit): the heap offset of a block of size bytes (a multiple of the alignment), or -1
 * when none fits. Only under the allocator lock. */
PyObject *
Slot_allocate(Slot *self, PyObject *const *args, Py_ssize_t nargs)
{
    long long size, small_limit;
    if (check_args("allocate", nargs, 2) < 0)
        return NULL;
    size = PyLong_AsLongLong(args[0]);
    if (size == -1 && PyErr_Occurred())
        return NULL;
    small_limit = PyLong_AsLongLong(args[1]);
    if (small_limit == -1 && PyErr_Occurred())
        return NULL;
    int64_t r = allocate(self, size, small_limit);
    if (r == -2)
        return NULL;
    return PyLong_FromLongLong(r);
}
