/*
 * The atomics and the futex: the operations of depot._ctypes_atomics, each one METH_FASTCALL function on an
 * absolute address inside a live mapping (callers check bounds and keep the mapping alive). The memory order is
 * part of each name: *_acquire loads pair with *_release stores, *_volatile accesses are sequentially
 * consistent, *_opaque accesses are atomic but unordered.
 */
#include "native.h"

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

#define FAST(name) {#name, (PyCFunction)(void (*)(void))name, METH_FASTCALL, NULL}

PyMethodDef native_atomic_methods[] = {
    FAST(get_long_acquire), FAST(get_long_volatile), FAST(get_long_opaque), FAST(put_long_volatile),
    FAST(put_long_release), FAST(put_long_opaque), FAST(compare_and_set_long), FAST(get_and_add_long),
    FAST(get_int_volatile), FAST(get_int_acquire), FAST(put_int_volatile), FAST(put_int_release),
    FAST(put_int_opaque), FAST(compare_and_set_int), FAST(get_and_add_int), FAST(futex_wait), FAST(futex_wake),
    FAST(futex_wake_all),
    {NULL, NULL, 0, NULL},
};
