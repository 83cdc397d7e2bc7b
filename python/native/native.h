/*
 * depot._native: the Python client's hot paths in C. The same operations as depot._ctypes_atomics (the atomics
 * and the futex) and as the pin protocol of depot._index and depot._pins (a whole get's lookup, pin and state
 * check in one call; a whole release in another), without a ctypes call per atomic access.
 *
 * The memory order is part of each name, as in depot._ctypes_atomics and Java's Atomics: *_acquire loads pair
 * with *_release stores, *_volatile accesses are sequentially consistent, *_opaque accesses are atomic but
 * unordered. The plain atomics take absolute addresses inside a live mapping, as the ctypes ones do: callers
 * check bounds and keep the mapping alive.
 *
 * The layout comes from depot._layout, handed over once by configure(); a field it lacks fails configure(), so
 * there is no second table of offsets here. A Slot checks, when made, that its client slot and the index lie
 * inside the mapping, and checks every value it reads from shared memory before using it (an index slot, a
 * heap block, a length), naming the value, the length and the capacity in the error.
 *
 * This private header holds what the extension's files share; each file is one concept:
 *
 *   layout.c   the layout table and configure()
 *   atomics.c  the atomics and the futex
 *   slot.c     the Slot type: one client slot's pins on one mapping (pin, publish, clear, release)
 *   heap.c     the heap allocator (Slot.allocate)
 *   create.c   a whole create under the allocator lock (Slot.probe_for_create, Slot.create)
 *   module.c   the module definition
 *
 * python/setup.py lists them; the build compiles each and links them into one module.
 */
#ifndef DEPOT_NATIVE_H
#define DEPOT_NATIVE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* the names shared between these files stay inside the module: only PyInit__native is exported */
#pragma GCC visibility push(hidden)

/* ---- the layout, from depot._layout (layout.c) ------------------------------------------------------------ */

typedef struct {
    int configured;
    uint64_t ie_state_word, ie_id, ie_id_length, ie_metadata_length, ie_block_offset, ie_data_length,
        ie_last_access, ie_entry_length, ie_max_probe, ie_use_interval, ie_generation_shift;
    uint64_t ct_pin_high_water, ct_gets, ct_pin_records, ct_pin_record_length;
    uint64_t hb_header_length, max_metadata;
    uint64_t h_evicting_space_waiters, h_space_sequence, h_space_waiters;
    uint64_t es_empty, es_sealed, es_evicting, es_delete_pending, es_tombstone, es_deleting;
    uint64_t known_states; /* bit n set: n is a code of depot._layout.EntryState */
    uint64_t hb_size, hb_prev_size, hb_next_free, hb_prev_free, hb_alignment, hb_free_bit;
    uint64_t ha_scan_limit, ha_min_split, h_free_bins, h_free_bins_offset, h_used_bytes;
    uint64_t ie_create_time, ie_owner_shift, ie_owner_mask, ie_flags_shift, ie_flags_mask, ie_flag_keep, es_creating;
    uint64_t hb_owner_slot, h_object_count, h_kept_bytes, h_kept_objects, ct_creates;
    uint64_t home_rotation, home_multiplier, home_shift;
} Layout;

/* set by configure(), all or nothing (L.configured); a Slot cannot be made before */
extern Layout L;
/* depot.errors.StoreFormatError, handed over by configure() */
extern PyObject *StoreFormatError;
/* configure() */
extern PyMethodDef native_layout_methods[];

/* ---- argument conversion ---------------------------------------------------------------------------------- */

static inline int
as_address(PyObject *o, char **out)
{
    unsigned long long x = PyLong_AsUnsignedLongLong(o);
    if (x == (unsigned long long)-1 && PyErr_Occurred())
        return -1;
    *out = (char *)(uintptr_t)x;
    return 0;
}

static inline int
as_u64(PyObject *o, uint64_t *out)
{
    unsigned long long x = PyLong_AsUnsignedLongLongMask(o);
    if (x == (unsigned long long)-1 && PyErr_Occurred())
        return -1;
    *out = x;
    return 0;
}

static inline int
as_u32(PyObject *o, uint32_t *out)
{
    uint64_t x;
    if (as_u64(o, &x) < 0)
        return -1;
    *out = (uint32_t)x;
    return 0;
}

static inline int
check_args(const char *name, Py_ssize_t nargs, Py_ssize_t want)
{
    if (nargs != want) {
        PyErr_Format(PyExc_TypeError, "%s() takes %zd arguments (%zd given)", name, want, nargs);
        return -1;
    }
    return 0;
}

/* ---- the atomics and the futex (atomics.c) ---------------------------------------------------------------- */

/* the atomics and the futex, each a METH_FASTCALL function */
extern PyMethodDef native_atomic_methods[];

/* wakes up to count sleepers on the futex word at a (shared, not _PRIVATE: it lies in a shared mapping) */
static inline void
wake(void *a, int count)
{
    syscall(SYS_futex, (uint32_t *)a, FUTEX_WAKE, count, NULL, NULL, 0);
}

/* ---- Slot: one client slot's pins on one mapping (slot.c) ------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    char *base;            /* the mapping's address */
    uint64_t file_length;
    char *entries;         /* the index's first entry */
    uint64_t index_slots;  /* a power of two */
    uint64_t max_probe;
    uint64_t heap_offset, heap_length;
    char *slot;            /* this client's slot in the client table */
    uint64_t capacity;     /* pin records in it */
    PyObject *path;        /* the store file, for messages */
    PyObject *mapping;     /* kept alive while this Slot is */
} Slot;

extern PyTypeObject SlotType;

/* the state word of an index slot (which the caller checked against index_slots) */
static inline uint64_t *
state_word(Slot *s, uint64_t index_slot)
{
    return (uint64_t *)(s->entries + index_slot * L.ie_entry_length + L.ie_state_word);
}

static inline uint64_t
le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* the home slot of a 20-byte id in the index: depot._index's IndexReader.home_of */
static inline uint64_t
home_of(Slot *s, const unsigned char *raw)
{
    uint64_t w0 = le64(raw), w1 = le64(raw + 8);
    uint64_t rotated = w1 << L.home_rotation | w1 >> (64 - L.home_rotation);
    return ((w0 ^ rotated) * L.home_multiplier) >> L.home_shift & (s->index_slots - 1);
}

/* the wall clock in microseconds since the epoch: an entry's last use, and its creation time (in ms) */
static inline uint64_t
now_micros(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* ---- the heap, and a create (heap.c, create.c) ------------------------------------------------------------ */

#define NONE (-1)

static inline int64_t
get64(const char *p)
{
    int64_t v;
    memcpy(&v, p, 8);
    return v;
}

static inline void
set64(char *p, int64_t v)
{
    memcpy(p, &v, 8);
}

static inline char *
block_at(Slot *s, int64_t offset)
{
    return s->base + s->heap_offset + offset;
}

/* the heap offset of a free block of size bytes now in use, NONE when none fits, -2 with an exception set when
 * the heap is corrupt. Only under the allocator lock. */
int64_t allocate(Slot *s, int64_t size, int64_t small_limit);

PyObject *Slot_allocate(Slot *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *Slot_probe_for_create(Slot *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *Slot_create(Slot *self, PyObject *const *args, Py_ssize_t nargs);

#pragma GCC visibility pop

#endif /* DEPOT_NATIVE_H */
