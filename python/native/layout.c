/*
 * The layout table: depot._layout's constants, handed over by name once by configure(). A field the table lacks
 * fails configure(), so there is no second table of offsets in the extension.
 */
#include "native.h"

Layout L;
PyObject *StoreFormatError;

typedef struct {
    const char *name;
    uint64_t *value;
} Field;

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
    Layout before = L;
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

PyMethodDef native_layout_methods[] = {
    {"configure", configure, METH_VARARGS,
     "configure(layout, store_format_error): the layout table ('Class.NAME' -> value) of depot._layout"},
    {NULL, NULL, 0, NULL},
};
