"""Atomic loads, stores and compare-and-set on shared memory, and the futex, through ``ctypes`` alone: the
implementation of ``depot._atomics`` where the C extension ``depot._native`` is not built (or ``DEPOT_NATIVE=0``).

The memory order is part of each name, as in Java's ``dev.depot.core.memory.Atomics``: ``*_acquire`` loads
pair with ``*_release`` stores; ``*_volatile`` accesses are sequentially consistent (Java's volatile), which
the pin protocol's Dekker handshake needs; ``*_opaque`` accesses are atomic but unordered. Every function
takes an absolute address inside a live mapping: callers check bounds and keep the mapping alive.

The operations are libatomic's (``__atomic_load_8`` and friends, which GCC's builtins call): plain Python
reads of a mapping are neither atomic nor ordered. libatomic is loaded with ``ctypes.PyDLL``, which keeps the
GIL across the call: an atomic access never blocks, and releasing and taking back the GIL cost more than the
access itself (a get makes four of them). libc, for the futex, is a ``ctypes.CDLL``, which releases the GIL
around each call, so a futex wait blocks only its own thread.
"""

import ctypes
import ctypes.util
import errno
import os
import platform

from .errors import DepotError

# C11 memory orders, as libatomic takes them
_RELAXED = 0
_ACQUIRE = 2
_RELEASE = 3
_SEQ_CST = 5


def _load_library(name, soname, kind=ctypes.CDLL):
    path = ctypes.util.find_library(name) or soname
    try:
        return kind(path, use_errno=True)
    except OSError as e:
        raise DepotError("the Depot client needs %s for atomic access to shared memory and could not load it (%s);"
                         " install it (Debian: libatomic1, libc6)" % (soname, e)) from None


# Calls that never block: the GIL is kept (PyDLL). Calls that may sleep (the futex): released (CDLL).
_libatomic = _load_library("atomic", "libatomic.so.1", ctypes.PyDLL)
_libc = _load_library("c", "libc.so.6")

_load8 = _libatomic.__atomic_load_8
_load8.argtypes = (ctypes.c_void_p, ctypes.c_int)
_load8.restype = ctypes.c_uint64
_store8 = _libatomic.__atomic_store_8
_store8.argtypes = (ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int)
_store8.restype = None
_cas8 = _libatomic.__atomic_compare_exchange_8
_cas8.argtypes = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int, ctypes.c_int)
_cas8.restype = ctypes.c_bool
_load4 = _libatomic.__atomic_load_4
_load4.argtypes = (ctypes.c_void_p, ctypes.c_int)
_load4.restype = ctypes.c_uint32
_store4 = _libatomic.__atomic_store_4
_store4.argtypes = (ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int)
_store4.restype = None
_add4 = _libatomic.__atomic_fetch_add_4
_add4.argtypes = (ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int)
_add4.restype = ctypes.c_uint32
_cas4 = _libatomic.__atomic_compare_exchange_4
_cas4.argtypes = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_int)
_cas4.restype = ctypes.c_bool
_add8 = _libatomic.__atomic_fetch_add_8
_add8.argtypes = (ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int)
_add8.restype = ctypes.c_uint64

_syscall = _libc.syscall
_syscall.restype = ctypes.c_long

_SYS_FUTEX = {"x86_64": 202, "aarch64": 98}.get(platform.machine())
# Shared (not _PRIVATE) ops: the word lives in a mapping that several processes share (as Java's Native).
_FUTEX_WAIT = 0
_FUTEX_WAKE = 1


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


def get_long_acquire(address):
    return _load8(address, _ACQUIRE)


def get_long_volatile(address):
    return _load8(address, _SEQ_CST)


def get_long_opaque(address):
    return _load8(address, _RELAXED)


def put_long_volatile(address, value):
    _store8(address, value, _SEQ_CST)


def put_long_release(address, value):
    _store8(address, value, _RELEASE)


def put_long_opaque(address, value):
    _store8(address, value, _RELAXED)


def compare_and_set_long(address, expected, value):
    """Sequentially consistent CAS of an unsigned 64-bit word; True when it was ``expected``."""
    e = ctypes.c_uint64(expected)
    return _cas8(address, ctypes.addressof(e), value, _SEQ_CST, _SEQ_CST)


def get_and_add_long(address, delta):
    """Sequentially consistent fetch-and-add of a 64-bit word (``delta`` may be negative)."""
    return _add8(address, delta & 0xFFFFFFFFFFFFFFFF, _SEQ_CST)


def compare_and_set_int(address, expected, value):
    """Sequentially consistent CAS of an unsigned 32-bit word; True when it was ``expected``."""
    e = ctypes.c_uint32(expected)
    return _cas4(address, ctypes.addressof(e), value, _SEQ_CST, _SEQ_CST)


def get_int_volatile(address):
    return _load4(address, _SEQ_CST)


def put_int_volatile(address, value):
    _store4(address, value, _SEQ_CST)


def get_int_acquire(address):
    return _load4(address, _ACQUIRE)


def put_int_release(address, value):
    _store4(address, value, _RELEASE)


def put_int_opaque(address, value):
    _store4(address, value, _RELAXED)


def get_and_add_int(address, delta):
    """Sequentially consistent fetch-and-add of a 32-bit word (``delta`` may be negative)."""
    return _add4(address, delta & 0xFFFFFFFF, _SEQ_CST)


def futex_wait(address, expected, timeout_seconds):
    """Sleeps while the 32-bit word at ``address`` holds ``expected``, at most ``timeout_seconds`` (None:
    no limit). Returns on a wake-up, a changed word, a signal or the timeout; the caller re-checks."""
    if _SYS_FUTEX is None:
        raise DepotError("waiting for objects needs the futex system call, whose number on %s this client does not"
                         " know" % platform.machine())
    if timeout_seconds is None:
        ts = None
    else:
        whole = int(timeout_seconds)
        ts = ctypes.byref(_Timespec(whole, int((timeout_seconds - whole) * 1e9)))
    r = _syscall(ctypes.c_long(_SYS_FUTEX), ctypes.c_void_p(address), ctypes.c_int(_FUTEX_WAIT),
                 ctypes.c_int(expected - (1 << 32) if expected >= 1 << 31 else expected), ts, None, ctypes.c_int(0))
    if r < 0:
        err = ctypes.get_errno()
        if err not in (errno.EAGAIN, errno.EINTR, errno.ETIMEDOUT):
            raise OSError(err, "futex wait failed: " + os.strerror(err))


def futex_wake(address, count):
    """Wakes up to ``count`` processes sleeping in ``futex_wait`` on the 32-bit word at ``address``."""
    if _SYS_FUTEX is None:
        raise DepotError("waking waiters needs the futex system call, whose number on %s this client does not"
                         " know" % platform.machine())
    _syscall(ctypes.c_long(_SYS_FUTEX), ctypes.c_void_p(address), ctypes.c_int(_FUTEX_WAKE),
             ctypes.c_int(count), None, None, ctypes.c_int(0))


def futex_wake_all(address):
    """Wakes every process sleeping in ``futex_wait`` on the 32-bit word at ``address``."""
    if _SYS_FUTEX is None:
        raise DepotError("waking waiters needs the futex system call, whose number on %s this client does not"
                         " know" % platform.machine())
    _syscall(ctypes.c_long(_SYS_FUTEX), ctypes.c_void_p(address), ctypes.c_int(_FUTEX_WAKE),
             ctypes.c_int(0x7FFFFFFF), None, None, ctypes.c_int(0))
