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
    uint64_t es_empty, es_sealed, es_evicting, es_delete_pending;
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
        || L.home_rotation >= 64 || L.home_shift >= 64) {
        PyErr_SetString(PyExc_ValueError, "the layout table does not fit depot._native: it reads 20-byte ids, "
                                          "8-byte aligned state words and pin records, and a 32-bit generation");
        L = before;
        return NULL;
    }
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
    if (heap_offset > file_length || heap_length > file_length - heap_offset) {
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
    if ((int32_t)__atomic_load_n((uint32_t *)(self->base + L.h_evicting_space_waiters), __ATOMIC_SEQ_CST) > 0) {
        __atomic_fetch_add((uint32_t *)(self->base + L.h_space_sequence), 1, __ATOMIC_SEQ_CST);
        if ((int32_t)__atomic_load_n((uint32_t *)(self->base + L.h_space_waiters), __ATOMIC_SEQ_CST) > 0)
            wake(self->base + L.h_space_sequence, 0x7FFFFFFF);
    }
    uint64_t word = __atomic_load_n((uint64_t *)(entry + L.ie_state_word), __ATOMIC_SEQ_CST);
    if ((word & 0xFF) == L.es_delete_pending && word >> L.ie_generation_shift == (record & 0xFFFFFFFFu))
        return PyLong_FromUnsignedLongLong(word);
    return PyLong_FromLong(0);
}

static PyMethodDef Slot_methods[] = {
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
    PyModuleDef_HEAD_INIT, "depot._native", "The Depot client's hot paths in C (see depot._accel).", -1, methods,
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
