"""Giving the C heap's free pages back to the OS (glibc's ``malloc_trim``).

A decode allocates and frees sample-sized buffers among the small allocations of Python, torch and the client;
glibc keeps the freed pages between live blocks resident, so a DataLoader worker that has decoded many samples
holds pages for samples it no longer has. Once a decoded sample is in the store, ``SharedCache`` hands them back:
the store's copy is then the only one. Without glibc this does nothing.
"""

import ctypes
import ctypes.util

__all__ = ["release_free_heap"]


def _malloc_trim():
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        trim = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):
        return None  # not glibc
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


_TRIM = _malloc_trim()


def release_free_heap():
    """Returns the C heap's free pages to the OS (the heap keeps its address space); True when the C library
    can, False elsewhere."""
    if _TRIM is None:
        return False
    _TRIM(0)
    return True
