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
 */
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

/* ---- the layout, from depot._layout ---------------------------------------------------------------------- */

typedef struct {
    const char *name;
    uint64_t *value;
} Field;

static struct {
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
} L;

static PyObject *StoreFormatError;

static Field fields[] = {
    {"IndexEntryDescriptor.STATE_WORD_OFFSET", &L.ie_state_word},
    {"IndexEntryDescriptor.ID_OFFSET", &L.ie_id},
    {"IndexEntryDescriptor.ID_LENGTH", &L.ie_id_length},
    {"IndexEntryDescriptor.METADATA_LENGTH_OFFSET", &L.ie_metadata_length},
    {"IndexEntryDescriptor.BLOCK_OFFSET_OFFSET", &L.ie_block_offset},
    {"IndexEntryDescriptor.DATA_LENGTH_OFFSET", &L.ie_data_length},
    {"IndexEntryDescriptor.LAST_ACCESS_OFFSET", &L.ie_last_access},
    {"IndexEntryDescriptor.ENTRY_LENGTH", &L.ie_entry_length},
    {"IndexEntryDescriptor.MAX_PROBE", &L.ie_max_probe},
    {"IndexEntryDescriptor.USE_RECORD_INTERVAL_MICROS", &L.ie_use_interval},
    {"IndexEntryDescriptor.GENERATION_SHIFT", &L.ie_generation_shift},
    {"ClientTableDescriptor.PIN_HIGH_WATER_OFFSET", &L.ct_pin_high_water},
    {"ClientTableDescriptor.GETS_OFFSET", &L.ct_gets},
    {"ClientTableDescriptor.PIN_RECORDS_OFFSET", &L.ct_pin_records},
    {"ClientTableDescriptor.PIN_RECORD_LENGTH", &L.ct_pin_record_length},
    {"HeapBlockDescriptor.HEADER_LENGTH", &L.hb_header_length},
    {"Store.MAX_METADATA_LENGTH", &L.max_metadata},
    {"StoreHeaderDescriptor.EVICTING_SPACE_WAITERS_OFFSET", &L.h_evicting_space_waiters},
    {"StoreHeaderDescriptor.SPACE_SEQUENCE_OFFSET", &L.h_space_sequence},
    {"StoreHeaderDescriptor.SPACE_WAITERS_OFFSET", &L.h_space_waiters},
    {"EntryState.EMPTY", &L.es_empty},
    {"EntryState.SEALED", &L.es_sealed},
    {"EntryState.EVICTING", &L.es_evicting},
    {"EntryState.DELETE_PENDING", &L.es_delete_pending},
    {"EntryState.TOMBSTONE", &L.es_tombstone},
    {"EntryState.DELETING", &L.es_deleting},
    {"HeapBlockDescriptor.SIZE_OFFSET", &L.hb_size},
    {"HeapBlockDescriptor.PREV_SIZE_OFFSET", &L.hb_prev_size},
    {"HeapBlockDescriptor.NEXT_FREE_OFFSET", &L.hb_next_free},
    {"HeapBlockDescriptor.PREV_FREE_OFFSET", &L.hb_prev_free},
    {"HeapBlockDescriptor.ALIGNMENT", &L.hb_alignment},
    {"HeapBlockDescriptor.FREE_BIT", &L.hb_free_bit},
    {"HeapAllocator.FIRST_FIT_SCAN_LIMIT", &L.ha_scan_limit},
    {"HeapAllocator.MIN_SPLIT", &L.ha_min_split},
    {"StoreHeaderDescriptor.FREE_BINS", &L.h_free_bins},
    {"StoreHeaderDescriptor.FREE_BINS_OFFSET", &L.h_free_bins_offset},
    {"StoreHeaderDescriptor.USED_BYTES_OFFSET", &L.h_used_bytes},
    {"IndexEntryDescriptor.CREATE_TIME_OFFSET", &L.ie_create_time},
    {"IndexEntryDescriptor.OWNER_SHIFT", &L.ie_owner_shift},
    {"IndexEntryDescriptor.OWNER_MASK", &L.ie_owner_mask},
    {"IndexEntryDescriptor.FLAGS_SHIFT", &L.ie_flags_shift},
    {"IndexEntryDescriptor.FLAGS_MASK", &L.ie_flags_mask},
    {"IndexEntryDescriptor.FLAG_KEEP", &L.ie_flag_keep},
    {"EntryState.CREATING", &L.es_creating},
    {"HeapBlockDescriptor.OWNER_SLOT_OFFSET", &L.hb_owner_slot},
    {"StoreHeaderDescriptor.OBJECT_COUNT_OFFSET", &L.h_object_count},
    {"StoreHeaderDescriptor.KEPT_BYTES_OFFSET", &L.h_kept_bytes},
    {"StoreHeaderDescriptor.KEPT_OBJECTS_OFFSET", &L.h_kept_objects},
    {"ClientTableDescriptor.CREATES_OFFSET", &L.ct_creates},
    {"HOME_ROTATION", &L.home_rotation},
    {"HOME_MULTIPLIER", &L.home_multiplier},
    {"HOME_SHIFT", &L.home_shift},
    {NULL, NULL},
};

static PyObject *
configure(PyObject *module, PyObject *args)
{
    PyObject *table, *error;
    if (!PyArg_ParseTuple(args, "O!O:configure", &PyDict_Type, &table, &error))
        return NULL;
    /* all or nothing: a table that fails leaves the layout as it was */
    __typeof__(L) before = L;
    for (Field *f = fields; f->name != NULL; f++) {
        PyObject *v = PyDict_GetItemString(table, f->name);
        if (v == NULL) {
            L = before;
            PyErr_Format(PyExc_KeyError, "the layout table lacks %s, which depot._native reads", f->name);
            return NULL;
        }
        unsigned long long x = PyLong_AsUnsignedLongLong(v);
        if (x == (unsigned long long)-1 && PyErr_Occurred()) {
            L = before;
            return NULL;
        }
        *f->value = x;
    }
    if (L.ie_id_length != 20 || L.ct_pin_record_length != 8 || L.ie_generation_shift != 32
        || L.ie_state_word % 8 || L.ie_entry_length % 8 || L.ct_pin_records % 8 || L.home_rotation == 0
        || L.home_rotation >= 64 || L.home_shift >= 64 || L.h_free_bins == 0 || L.h_free_bins > 64
        || L.hb_alignment == 0 || (L.hb_alignment & (L.hb_alignment - 1))
        || L.hb_size + 8 > L.hb_header_length || L.hb_prev_size + 8 > L.hb_header_length
        || L.hb_next_free + 8 > L.hb_header_length || L.hb_prev_free + 8 > L.hb_header_length
        || L.hb_owner_slot + 8 > L.hb_header_length || L.ie_metadata_length + 4 != L.ie_block_offset
        || L.ie_last_access + 8 > L.ie_entry_length || L.ie_create_time + 8 > L.ie_entry_length
        || L.ie_id + L.ie_id_length > L.ie_entry_length) {
        PyErr_SetString(PyExc_ValueError, "the layout table does not fit depot._native: it reads 20-byte ids, "
                                          "8-byte aligned state words and pin records, and a 32-bit generation");
        L = before;
        return NULL;
    }
    PyObject *key, *value;
    Py_ssize_t at = 0;
    uint64_t known = 0;
    PyObject *prefix = PyUnicode_FromString("EntryState.");
    if (prefix == NULL) {
        L = before;
        return NULL;
    }
    while (PyDict_Next(table, &at, &key, &value)) {
        if (PyUnicode_Check(key) && PyUnicode_Tailmatch(key, prefix, 0, PY_SSIZE_T_MAX, -1) == 1) {
            long long code = PyLong_AsLongLong(value);
            if (code < 0 || code > 255 || PyErr_Occurred()) {
                PyErr_Clear();
                Py_DECREF(prefix);
                L = before;
                PyErr_Format(PyExc_ValueError, "the layout table's state %R is not a code from 0 to 255", key);
                return NULL;
            }
            if (code < 64)
                known |= 1ull << code;
        }
    }
    Py_DECREF(prefix);
    L.known_states = known;
    Py_INCREF(error);
    Py_XSETREF(StoreFormatError, error);
    L.configured = 1;
    Py_RETURN_NONE;
}

/* ---- argument conversion --------------------------------------------------------------------------------- */

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

static int
check_args(const char *name, Py_ssize_t nargs, Py_ssize_t want)
{
    if (nargs != want) {
        PyErr_Format(PyExc_TypeError, "%s() takes %zd arguments (%zd given)", name, want, nargs);
        return -1;
    }
    return 0;
}

/* ---- the atomics ----------------------------------------------------------------------------------------- */

#define LOAD(fn, type, order, topy)                                                                        \
    static PyObject *fn(PyObject *m, PyObject *const *args, Py_ssize_t nargs)                              \
    {                                                                                                      \
        char *a;                                                                                           \
        if (check_args(#fn, nargs, 1) < 0 || as_address(args[0], &a) < 0)                                  \
            return NULL;                                                                                   \
        return topy(__atomic_load_n((type *)a, order));                                                    \
    }

#define STORE(fn, type, conv, order)                                                                       \
    static PyObject *fn(PyObject *m, PyObject *const *args, Py_ssize_t nargs)                              \
    {                                                                                                      \
        char *a;                                                                                           \
        type v;                                                                                            \
        if (check_args(#fn, nargs, 2) < 0 || as_address(args[0], &a) < 0 || conv(args[1], &v) < 0)        \
            return NULL;                                                                                   \
        __atomic_store_n((type *)a, v, order);                                                             \
        Py_RETURN_NONE;                                                                                    \
    }

#define CAS(fn, type, conv)                                                                                \
    static PyObject *fn(PyObject *m, PyObject *const *args, Py_ssize_t nargs)                              \
    {                                                                                                      \
        char *a;                                                                                           \
        type e, v;                                                                                         \
        if (check_args(#fn, nargs, 3) < 0 || as_address(args[0], &a) < 0 || conv(args[1], &e) < 0         \
            || conv(args[2], &v) < 0)                                                                      \
            return NULL;                                                                                   \
        return PyBool_FromLong(                                                                            \
            __atomic_compare_exchange_n((type *)a, &e, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));         \
    }

#define ADD(fn, type, conv, topy)                                                                          \
    static PyObject *fn(PyObject *m, PyObject *const *args, Py_ssize_t nargs)                              \
    {                                                                                                      \
        char *a;                                                                                           \
        type d;                                                                                            \
        if (check_args(#fn, nargs, 2) < 0 || as_address(args[0], &a) < 0 || conv(args[1], &d) < 0)        \
            return NULL;                                                                                   \
        return topy(__atomic_fetch_add((type *)a, d, __ATOMIC_SEQ_CST));                                   \
    }

LOAD(get_long_acquire, uint64_t, __ATOMIC_ACQUIRE, PyLong_FromUnsignedLongLong)
LOAD(get_long_volatile, uint64_t, __ATOMIC_SEQ_CST, PyLong_FromUnsignedLongLong)
LOAD(get_long_opaque, uint64_t, __ATOMIC_RELAXED, PyLong_FromUnsignedLongLong)
STORE(put_long_volatile, uint64_t, as_u64, __ATOMIC_SEQ_CST)
STORE(put_long_release, uint64_t, as_u64, __ATOMIC_RELEASE)
STORE(put_long_opaque, uint64_t, as_u64, __ATOMIC_RELAXED)
CAS(compare_and_set_long, uint64_t, as_u64)
ADD(get_and_add_long, uint64_t, as_u64, PyLong_FromUnsignedLongLong)
LOAD(get_int_volatile, uint32_t, __ATOMIC_SEQ_CST, PyLong_FromUnsignedLong)
LOAD(get_int_acquire, uint32_t, __ATOMIC_ACQUIRE, PyLong_FromUnsignedLong)
STORE(put_int_volatile, uint32_t, as_u32, __ATOMIC_SEQ_CST)
STORE(put_int_release, uint32_t, as_u32, __ATOMIC_RELEASE)
STORE(put_int_opaque, uint32_t, as_u32, __ATOMIC_RELAXED)
CAS(compare_and_set_int, uint32_t, as_u32)
ADD(get_and_add_int, uint32_t, as_u32, PyLong_FromUnsignedLong)

/* ---- the futex (shared, not _PRIVATE: the word lies in a mapping several processes share) ------------------ */

static PyObject *
futex_wait(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    char *a;
    uint32_t expected;
    struct timespec ts, *tsp = NULL;
    if (check_args("futex_wait", nargs, 3) < 0 || as_address(args[0], &a) < 0 || as_u32(args[1], &expected) < 0)
        return NULL;
    if (args[2] != Py_None) {
        double t = PyFloat_AsDouble(args[2]);
        if (t == -1.0 && PyErr_Occurred())
            return NULL;
        if (t < 0)
            t = 0;
        ts.tv_sec = (time_t)t;
        ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
        tsp = &ts;
    }
    long r;
    int err;
    Py_BEGIN_ALLOW_THREADS
    r = syscall(SYS_futex, (uint32_t *)a, FUTEX_WAIT, expected, tsp, NULL, 0);
    err = errno;
    Py_END_ALLOW_THREADS
    if (r < 0 && err != EAGAIN && err != EINTR && err != ETIMEDOUT) {
        PyErr_Format(PyExc_OSError, "futex wait failed: %s", strerror(err));
        return NULL;
    }
    Py_RETURN_NONE;
}

static inline void
wake(void *a, int count)
{
    syscall(SYS_futex, (uint32_t *)a, FUTEX_WAKE, count, NULL, NULL, 0);
}

static PyObject *
futex_wake(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    char *a;
    uint32_t count;
    if (check_args("futex_wake", nargs, 2) < 0 || as_address(args[0], &a) < 0 || as_u32(args[1], &count) < 0)
        return NULL;
    wake(a, (int)count);
    Py_RETURN_NONE;
}

static PyObject *
futex_wake_all(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    char *a;
    if (check_args("futex_wake_all", nargs, 1) < 0 || as_address(args[0], &a) < 0)
        return NULL;
    wake(a, 0x7FFFFFFF);
    Py_RETURN_NONE;
}

/* ---- Slot: one client slot's pins on one mapping ---------------------------------------------------------- */

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
state_word(Slot *s, uint64_t index_slot)
{
    return (uint64_t *)(s->entries + index_slot * L.ie_entry_length + L.ie_state_word);
}

static inline uint64_t *
record_at(Slot *s, uint64_t position)
{
    return (uint64_t *)(s->slot + L.ct_pin_records + position * L.ct_pin_record_length);
}

static inline uint64_t
le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static inline uint64_t
home_of(Slot *s, const unsigned char *raw)
{
    uint64_t w0 = le64(raw), w1 = le64(raw + 8);
    uint64_t rotated = w1 << L.home_rotation | w1 >> (64 - L.home_rotation);
    return ((w0 ^ rotated) * L.home_multiplier) >> L.home_shift & (s->index_slots - 1);
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

static inline uint64_t
now_micros(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
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

/* ---- the heap allocator (under the allocator lock, which orders these plain accesses between processes) ---- */

/* depot._allocator's HeapAllocator.allocate, step for step (and so Java's HeapAllocator.allocate), with every
 * block offset and size read from the heap checked against it before use. */

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
block_at(Slot *s, int64_t offset)
{
    return s->base + s->heap_offset + offset;
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

static int64_t
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
static PyObject *
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
static PyObject *
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
static PyObject *
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

static PyTypeObject SlotType = {
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

/* ---- the module ------------------------------------------------------------------------------------------ */

#define FAST(name) {#name, (PyCFunction)(void (*)(void))name, METH_FASTCALL, NULL}

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS,
     "configure(layout, store_format_error): the layout table ('Class.NAME' -> value) of depot._layout"},
    FAST(get_long_acquire), FAST(get_long_volatile), FAST(get_long_opaque), FAST(put_long_volatile),
    FAST(put_long_release), FAST(put_long_opaque), FAST(compare_and_set_long), FAST(get_and_add_long),
    FAST(get_int_volatile), FAST(get_int_acquire), FAST(put_int_volatile), FAST(put_int_release),
    FAST(put_int_opaque), FAST(compare_and_set_int), FAST(get_and_add_int), FAST(futex_wait), FAST(futex_wake),
    FAST(futex_wake_all),
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "depot._native", "The Depot client's hot paths in C (see depot._accel).", -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__native(void)
{
    if (PyType_Ready(&SlotType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    Py_INCREF(&SlotType);
    if (PyModule_AddObject(m, "Slot", (PyObject *)&SlotType) < 0) {
        Py_DECREF(&SlotType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
