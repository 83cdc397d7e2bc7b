/*
 * The Slot type: one client slot's pins on one mapping. A Slot checks, when made, that its client slot and the
 * index lie inside the mapping; pin() is a whole get's lookup, pin and state check in one call (depot._index's
 * IndexReader.try_pin) and release() a whole release (depot._pins), with every value read from shared memory
 * checked before use. Its create and allocate methods are in create.c and heap.c.
 */
#include "native.h"

static int
Slot_init(Slot *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"mapping", "base", "file_length", "index_offset", "index_slots", "heap_offset",
                            "heap_length", "slot_offset", "capacity", "path", NULL};
    PyObject *mapping, *path;
    unsigned long long base, file_length, index_offset, index_slots, heap_offset, heap_length, slot_offset, capacity;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OKKKKKKKKO:Slot", names, &mapping, &base, &file_length,
                                     &index_offset, &index_slots, &heap_offset, &heap_length, &slot_offset,
                                     &capacity, &path))
        return -1;
    if (!L.configured) {
        PyErr_SetString(PyExc_RuntimeError, "depot._native.configure() was not called");
        return -1;
    }
    /* each sum checked against the file length in steps that cannot overflow */
    if (index_slots == 0 || (index_slots & (index_slots - 1)) || index_offset > file_length
        || index_slots > (file_length - index_offset) / L.ie_entry_length) {
        PyErr_Format(PyExc_ValueError, "an index of %llu slots at %llu does not fit the %llu-byte mapping",
                     index_slots, index_offset, file_length);
        return -1;
    }
    if (slot_offset % 8 || slot_offset > file_length || L.ct_pin_records > file_length - slot_offset
        || capacity > (file_length - slot_offset - L.ct_pin_records) / L.ct_pin_record_length) {
        PyErr_Format(PyExc_ValueError, "a client slot of %llu pin records at %llu does not fit the %llu-byte mapping",
                     capacity, slot_offset, file_length);
        return -1;
    }
    if (heap_offset > file_length || heap_length > file_length - heap_offset
        || L.h_free_bins_offset + L.h_free_bins * 8 > file_length || L.h_used_bytes + 8 > file_length
        || L.h_object_count + 8 > file_length || L.h_kept_bytes + 8 > file_length
        || L.h_kept_objects + 8 > file_length) {
        PyErr_Format(PyExc_ValueError, "a heap of %llu bytes at %llu does not fit the %llu-byte mapping",
                     heap_length, heap_offset, file_length);
        return -1;
    }
    self->base = (char *)(uintptr_t)base;
    self->file_length = file_length;
    self->entries = self->base + index_offset;
    self->index_slots = index_slots;
    self->max_probe = index_slots < L.ie_max_probe ? index_slots : L.ie_max_probe;
    self->heap_offset = heap_offset;
    self->heap_length = heap_length;
    self->slot = self->base + slot_offset;
    self->capacity = capacity;
    Py_INCREF(path);
    Py_XSETREF(self->path, path);
    Py_INCREF(mapping);
    Py_XSETREF(self->mapping, mapping);
    return 0;
}

static void
Slot_dealloc(Slot *self)
{
    Py_XDECREF(self->path);
    Py_XDECREF(self->mapping);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static inline uint64_t *
record_at(Slot *s, uint64_t position)
{
    return (uint64_t *)(s->slot + L.ct_pin_records + position * L.ct_pin_record_length);
}

static int
position_of(Slot *s, PyObject *o, uint64_t *out)
{
    unsigned long long p = PyLong_AsUnsignedLongLong(o);
    if (p == (unsigned long long)-1 && PyErr_Occurred())
        return -1;
    if (p >= s->capacity) {
        PyErr_Format(PyExc_IndexError, "pin position %llu is outside the %llu pin records of this client slot",
                     p, (unsigned long long)s->capacity);
        return -1;
    }
    *out = p;
    return 0;
}

/* The index slot named by a pin record, checked against the index. */
static int
index_slot_of(Slot *s, uint64_t record, uint64_t *out)
{
    uint64_t index_slot = (record >> 32) - 1;
    if ((record >> 32) == 0 || index_slot >= s->index_slots) {
        PyErr_Format(PyExc_IndexError, "pin record %llu names index slot %lld, outside the %llu slots of the index",
                     (unsigned long long)record, (long long)(record >> 32) - 1, (unsigned long long)s->index_slots);
        return -1;
    }
    *out = index_slot;
    return 0;
}

/* Publishes a record at a position: the high-water mark first (a scanner that sees the record sees it within
 * the mark), then the record with a volatile store (the Dekker handshake with a deleter's CAS then scan). The
 * mark only grows; the GIL, held throughout, orders this process's publishers. */
static inline void
publish(Slot *s, uint64_t position, uint64_t record)
{
    uint32_t *high_water = (uint32_t *)(s->slot + L.ct_pin_high_water);
    if (position >= __atomic_load_n(high_water, __ATOMIC_RELAXED))
        __atomic_store_n(high_water, (uint32_t)(position + 1), __ATOMIC_RELEASE);
    __atomic_store_n(record_at(s, position), record, __ATOMIC_SEQ_CST);
}

static PyObject *
Slot_publish(Slot *self, PyObject *const *args, Py_ssize_t nargs)
{
    uint64_t position, record, index_slot;
    if (check_args("publish", nargs, 2) < 0 || position_of(self, args[0], &position) < 0
        || as_u64(args[1], &record) < 0 || index_slot_of(self, record, &index_slot) < 0)
        return NULL;
    publish(self, position, record);
    Py_RETURN_NONE;
}

static PyObject *
Slot_clear(Slot *self, PyObject *const *args, Py_ssize_t nargs)
{
    uint64_t position;
    if (check_args("clear", nargs, 1) < 0 || position_of(self, args[0], &position) < 0)
        return NULL;
    __atomic_store_n(record_at(self, position), 0, __ATOMIC_SEQ_CST);
    Py_RETURN_NONE;
}

/* pin(raw, position): the sealed object with the 20-byte id raw pinned at position, as depot._index's
 * IndexReader.try_pin does it: (record, data offset, data length, metadata bytes); None when there is no sealed
 * or evicting entry with the id (the position is left unused); (record, state word) when the entry was pinned
 * but is no longer sealed (the record stays published: the caller releases it as an unpin does). */
static PyObject *
Slot_pin(Slot *self, PyObject *const *args, Py_ssize_t nargs)
{
    uint64_t position;
    if (check_args("pin", nargs, 2) < 0)
        return NULL;
    PyObject *raw = args[0];
    if (!PyBytes_CheckExact(raw) || (uint64_t)PyBytes_GET_SIZE(raw) != L.ie_id_length) {
        PyErr_Format(PyExc_TypeError, "an object id is %llu bytes, got %R", (unsigned long long)L.ie_id_length, raw);
        return NULL;
    }
    if (position_of(self, args[1], &position) < 0)
        return NULL;
    const unsigned char *id = (const unsigned char *)PyBytes_AS_STRING(raw);
    uint64_t mask = self->index_slots - 1, home = home_of(self, id);
    for (;;) {
        uint64_t slot = home, word = 0, generation = 0;
        int found = 0;
        for (uint64_t i = 0; i < self->max_probe; i++) {
            word = __atomic_load_n(state_word(self, slot), __ATOMIC_ACQUIRE);
            uint64_t state = word & 0xFF;
            if (state == L.es_empty)
                break;
            /* read after the acquire of this generation; the re-check after pinning proves it was its id */
            if ((state == L.es_sealed || state == L.es_evicting)
                && memcmp(self->entries + slot * L.ie_entry_length + L.ie_id, id, L.ie_id_length) == 0) {
                found = 1;
                generation = word >> L.ie_generation_shift;
                break;
            }
            slot = (slot + 1) & mask;
        }
        if (!found)
            Py_RETURN_NONE;
        uint64_t record = (slot + 1) << 32 | generation;
        publish(self, position, record);
        word = __atomic_load_n(state_word(self, slot), __ATOMIC_SEQ_CST);
        if (word >> L.ie_generation_shift != generation) {
            /* the slot was reused between lookup and pin: look again */
            __atomic_store_n(record_at(self, position), 0, __ATOMIC_SEQ_CST);
            continue;
        }
        if ((word & 0xFF) != L.es_sealed)
            return Py_BuildValue("(KK)", (unsigned long long)record, (unsigned long long)word);
        /* pinned: the fields below cannot change until the pin is released */
        char *entry = self->entries + slot * L.ie_entry_length;
        uint32_t metadata_length;
        uint64_t block, size;
        memcpy(&metadata_length, entry + L.ie_metadata_length, 4);
        memcpy(&block, entry + L.ie_block_offset, 8);
        memcpy(&size, entry + L.ie_data_length, 8);
        uint64_t data_offset = self->heap_offset + block + L.hb_header_length;
        if (block >= self->heap_length || metadata_length > L.max_metadata || data_offset > self->file_length
            || size > self->file_length - data_offset
            || metadata_length > self->file_length - data_offset - size) {
            __atomic_store_n(record_at(self, position), 0, __ATOMIC_SEQ_CST);
            PyErr_Format(StoreFormatError, "index slot %llu of %U is corrupt: block %llu, %llu bytes of data and %u of "
                         "metadata do not fit the %llu-byte heap; run `depot doctor`", (unsigned long long)slot,
                         self->path, (unsigned long long)block, (unsigned long long)size, metadata_length,
                         (unsigned long long)self->heap_length);
            return NULL;
        }
        PyObject *metadata = PyBytes_FromStringAndSize(self->base + data_offset + size, metadata_length);
        if (metadata == NULL) {
            __atomic_store_n(record_at(self, position), 0, __ATOMIC_SEQ_CST);
            return NULL;
        }
        /* this client's own operation counter (summed by the daemon's /metrics), as Java's Store */
        __atomic_fetch_add((uint64_t *)(self->slot + L.ct_gets), 1, __ATOMIC_SEQ_CST);
        return Py_BuildValue("(KKKN)", (unsigned long long)record, (unsigned long long)data_offset,
                             (unsigned long long)size, metadata);
    }
}

/* release(position, record, record_use): what depot._pins's Pin.release (record_use true) or ClientSlot.unpin
 * does in shared memory: the use recorded for eviction (at most one store per interval), the record cleared
 * (volatile), the space sequence bumped and its sleepers woken while a create that may evict waits, then the
 * entry's state word read (volatile). Returns that word when the entry is DELETE_PENDING with the record's
 * generation (a delete this pin held back: the caller finishes it), else 0. */
static PyObject *
Slot_release(Slot *self, PyObject *const *args, Py_ssize_t nargs)
{
    uint64_t position, record, index_slot;
    if (check_args("release", nargs, 3) < 0 || position_of(self, args[0], &position) < 0
        || as_u64(args[1], &record) < 0 || index_slot_of(self, record, &index_slot) < 0)
        return NULL;
    int use = PyObject_IsTrue(args[2]);
    if (use < 0)
        return NULL;
    char *entry = self->entries + index_slot * L.ie_entry_length;
    if (use) {
        uint64_t *last = (uint64_t *)(entry + L.ie_last_access), now = now_micros();
        if (now - __atomic_load_n(last, __ATOMIC_RELAXED) >= L.ie_use_interval)
            __atomic_store_n(last, now, __ATOMIC_RELAXED);
    }
    __atomic_store_n(record_at(self, position), 0, __ATOMIC_SEQ_CST);
    /* the object may be evictable now: a create waiting for room that may evict tries again (depot._space) */
    if (__atomic_load_n((uint32_t *)(self->base + L.h_evicting_space_waiters), __ATOMIC_SEQ_CST) != 0) {
        __atomic_fetch_add((uint32_t *)(self->base + L.h_space_sequence), 1, __ATOMIC_SEQ_CST);
        if (__atomic_load_n((uint32_t *)(self->base + L.h_space_waiters), __ATOMIC_SEQ_CST) != 0)
            wake(self->base + L.h_space_sequence, 0x7FFFFFFF);
    }
    uint64_t word = __atomic_load_n((uint64_t *)(entry + L.ie_state_word), __ATOMIC_SEQ_CST);
    if ((word & 0xFF) == L.es_delete_pending && word >> L.ie_generation_shift == (record & 0xFFFFFFFFu))
        return PyLong_FromUnsignedLongLong(word);
    return PyLong_FromLong(0);
}

static PyMethodDef Slot_methods[] = {
    {"create", (PyCFunction)(void (*)(void))Slot_create, METH_FASTCALL,
     "create(raw, size, metadata, block_size, keep, client, max_objects, small_limit): (slot, generation, data "
     "offset, home), False (the id exists) or None (no room without the daemon); under the allocator lock"},
    {"probe_for_create", (PyCFunction)(void (*)(void))Slot_probe_for_create, METH_FASTCALL,
     "probe_for_create(raw): (blocking slot or -1, first free slot or -1, home slot)"},
    {"allocate", (PyCFunction)(void (*)(void))Slot_allocate, METH_FASTCALL,
     "allocate(size, small_limit): a heap block's offset, or -1 (under the allocator lock)"},
    {"pin", (PyCFunction)(void (*)(void))Slot_pin, METH_FASTCALL,
     "pin(raw, position): (record, data offset, size, metadata), None, or (record, state word)"},
    {"publish", (PyCFunction)(void (*)(void))Slot_publish, METH_FASTCALL,
     "publish(position, record): the high-water mark, then the record (volatile)"},
    {"clear", (PyCFunction)(void (*)(void))Slot_clear, METH_FASTCALL, "clear(position): the record set to 0"},
    {"release", (PyCFunction)(void (*)(void))Slot_release, METH_FASTCALL,
     "release(position, record, record_use): the delete-pending state word to finish, or 0"},
    {NULL, NULL, 0, NULL},
};

PyTypeObject SlotType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "depot._native.Slot",
    .tp_basicsize = sizeof(Slot),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Slot(mapping, base, file_length, index_offset, index_slots, heap_offset, heap_length, slot_offset, "
              "capacity, path): one client slot's pins on one mapping",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Slot_init,
    .tp_dealloc = (destructor)Slot_dealloc,
    .tp_methods = Slot_methods,
};
