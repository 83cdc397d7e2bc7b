/*
 * The module depot._native: configure() (layout.c), the atomics and the futex (atomics.c) and the Slot type
 * (slot.c, heap.c, create.c). See native.h for what each file holds.
 */
#include "native.h"

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "depot._native", "The Depot client's hot paths in C (see depot._accel).", -1, NULL, NULL,
    NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__native(void)
{
    if (PyType_Ready(&SlotType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddFunctions(m, native_layout_methods) < 0 || PyModule_AddFunctions(m, native_atomic_methods) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&SlotType);
    if (PyModule_AddObject(m, "Slot", (PyObject *)&SlotType) < 0) {
        Py_DECREF(&SlotType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
