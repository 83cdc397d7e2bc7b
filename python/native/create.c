/*
 * A whole create under the allocator lock, in one call: the probe of the index for the id, the block from the
 * heap allocator (heap.c), then the entry's fields, its CREATING state word and the counters. The same steps
 * as depot._local_writes's try_create.
 */
#include "native.h"

static int
probe(Slot *self, const unsigned char *id, long long *blocking_out, long long *free_out, uint64_t *home_out)
{
    uint64_t mask = self->index_slots - 1, home = home_of(self, id), slot = home;
    long long free = -1, blocking = -1;
    for (uint64_t i = 0; i < self->max_probe; i++) {
        uint64_t state = __atomic_load_n(state_word(self, slot), __ATOMIC_ACQUIRE) & 0xFF;
        if (state >= 64 || !(L.known_states >> state & 1)) {
            PyErr_Format(StoreFormatError, "index slot %llu of %U is corrupt: unknown state code %llu; run `depot "
                         "doctor` to drop the entry", (unsigned long long)slot, self->path, (unsigned long long)state);
            return -1;
        }
        if (state == L.es_empty) {
            if (free < 0)
                free = (long long)slot;
            break;
        }
        if (state == L.es_tombstone) {
            if (free < 0)
                free = (long long)slot;
        } else if (state != L.es_deleting && state != L.es_delete_pending
                   && memcmp(self->entries + slot * L.ie_entry_length + L.ie_id, id, L.ie_id_length) == 0) {
            blocking = (long long)slot;
            break;
        }
        slot = (slot + 1) & mask;
    }
    *blocking_out = blocking;
    *free_out = free;
    *home_out = home;
    return 0;
}

/* probe_for_create(raw): (index slot of a live entry with the id that blocks a create of it or -1, the first
 * free slot (EMPTY or TOMBSTONE) on the id's probe chain or -1, the id's home slot): depot._local_writes's
 * _find_blocking_or_free and home_of in one call, under the allocator lock. A state code that depot._layout
 * does not know is a corrupt entry. */
PyObject *
Slot_probe_for_create(Slot *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (check_args("probe_for_create", nargs, 1) < 0)
        return NULL;
    PyObject *raw = args[0];
    if (!PyBytes_CheckExact(raw) || (uint64_t)PyBytes_GET_SIZE(raw) != L.ie_id_length) {
        PyErr_Format(PyExc_TypeError, "an object id is %llu bytes, got %R", (unsigned long long)L.ie_id_length, raw);
        return NULL;
    }
    long long blocking, free;
    uint64_t home;
    if (probe(self, (const unsigned char *)PyBytes_AS_STRING(raw), &blocking, &free, &home) < 0)
        return NULL;
    return Py_BuildValue("(LLK)", blocking, free, (unsigned long long)home);
}

/* create(raw, size, metadata, block_size, keep, client, max_objects, small_limit): depot._local_writes's
 * try_create between taking and releasing the allocator lock, in one call: the probe, the index's room, the
 * block, the metadata after the data, the entry's id and fields, then its CREATING state word (a release store:
 * lock-free readers acquire it before reading the fields), the block's owner and the counters. Returns
 * (index slot, generation, data offset, home slot); False when a live entry has the id; None when only the
 * daemon can make room (the index or the heap is full). Only under the allocator lock. */
PyObject *
Slot_create(Slot *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (check_args("create", nargs, 8) < 0)
        return NULL;
    PyObject *raw = args[0], *metadata = args[2];
    if (!PyBytes_CheckExact(raw) || (uint64_t)PyBytes_GET_SIZE(raw) != L.ie_id_length) {
        PyErr_Format(PyExc_TypeError, "an object id is %llu bytes, got %R", (unsigned long long)L.ie_id_length, raw);
        return NULL;
    }
    if (!PyBytes_CheckExact(metadata)) {
        PyErr_Format(PyExc_TypeError, "metadata must be bytes, got %R", metadata);
        return NULL;
    }
    long long size = PyLong_AsLongLong(args[1]), block_size = PyLong_AsLongLong(args[3]);
    long long client = PyLong_AsLongLong(args[5]), max_objects = PyLong_AsLongLong(args[6]);
    long long small_limit = PyLong_AsLongLong(args[7]);
    int keep = PyObject_IsTrue(args[4]);
    if (PyErr_Occurred() || keep < 0)
        return NULL;
    Py_ssize_t metadata_length = PyBytes_GET_SIZE(metadata);
    if (size < 0 || metadata_length > (Py_ssize_t)L.max_metadata || block_size <= 0
        || block_size < (long long)L.hb_header_length + size + metadata_length) {
        PyErr_Format(PyExc_ValueError, "a block of %lld bytes cannot hold %lld bytes of data and %zd of metadata "
                     "(at most %llu)", block_size, size, metadata_length, (unsigned long long)L.max_metadata);
        return NULL;
    }
    const unsigned char *id = (const unsigned char *)PyBytes_AS_STRING(raw);
    long long blocking, free;
    uint64_t home;
    if (probe(self, id, &blocking, &free, &home) < 0)
        return NULL;
    if (blocking >= 0)
        Py_RETURN_FALSE;
    if (free < 0 || get64(self->base + L.h_object_count) >= max_objects)
        Py_RETURN_NONE; /* the index is full: the daemon evicts or explains */
    int64_t block = allocate(self, block_size, small_limit);
    if (block == -2)
        return NULL;
    if (block == NONE)
        Py_RETURN_NONE; /* no room without evicting, waiting or spilling: the daemon's job */
    uint64_t data_offset = self->heap_offset + (uint64_t)block + L.hb_header_length;
    /* the allocator checked the block against the heap, and the block holds header, data and metadata */
    memcpy(self->base + data_offset + size, PyBytes_AS_STRING(metadata), metadata_length);
    uint64_t *word = state_word(self, (uint64_t)free);
    uint64_t generation = ((__atomic_load_n(word, __ATOMIC_ACQUIRE) >> L.ie_generation_shift) + 1) & 0xFFFFFFFFu;
    char *entry = self->entries + (uint64_t)free * L.ie_entry_length;
    memcpy(entry + L.ie_id, id, L.ie_id_length);
    uint64_t now = now_micros();
    uint32_t meta32 = (uint32_t)metadata_length;
    int64_t created = (int64_t)(now / 1000), used = (int64_t)now, data_length = size;
    /* created (epoch ms) and last used (epoch µs), as Java's ObjectIndex.insert */
    memcpy(entry + L.ie_metadata_length, &meta32, 4);
    set64(entry + L.ie_block_offset, block);
    set64(entry + L.ie_data_length, data_length);
    set64(entry + L.ie_create_time, created);
    set64(entry + L.ie_last_access, used);
    uint64_t flags = keep ? L.ie_flag_keep : 0;
    __atomic_store_n(word, generation << L.ie_generation_shift | (flags & L.ie_flags_mask) << L.ie_flags_shift
                     | ((uint64_t)client & L.ie_owner_mask) << L.ie_owner_shift | L.es_creating, __ATOMIC_RELEASE);
    set64(block_at(self, block) + L.hb_owner_slot, free);
    __atomic_fetch_add((uint64_t *)(self->base + L.h_object_count), 1, __ATOMIC_SEQ_CST);
    if (keep) {
        __atomic_fetch_add((uint64_t *)(self->base + L.h_kept_bytes), (uint64_t)block_size, __ATOMIC_SEQ_CST);
        __atomic_fetch_add((uint64_t *)(self->base + L.h_kept_objects), 1, __ATOMIC_SEQ_CST);
    }
    return Py_BuildValue("(LKKK)", free, (unsigned long long)generation, (unsigned long long)data_offset,
                         (unsigned long long)home);
}
