"""Atomic loads, stores and compare-and-set on shared memory, and the futex.

The memory order is part of each name, as in Java's ``dev.depot.core.memory.Atomics``: ``*_acquire`` loads
pair with ``*_release`` stores; ``*_volatile`` accesses are sequentially consistent (Java's volatile), which
the pin protocol's Dekker handshake needs; ``*_opaque`` accesses are atomic but unordered. Every function
takes an absolute address inside a live mapping: callers check bounds and keep the mapping alive.

The functions are the C extension's (``depot._native``) when it is built, else ``depot._ctypes_atomics``'s
(``depot._accel`` chooses, once): the same names, arguments and results.
"""

from ._accel import native

_NAMES = ("get_long_acquire", "get_long_volatile", "get_long_opaque", "put_long_volatile", "put_long_release",
          "put_long_opaque", "compare_and_set_long", "get_and_add_long", "compare_and_set_int", "get_int_volatile",
          "put_int_volatile", "get_int_acquire", "put_int_release", "put_int_opaque", "get_and_add_int",
          "futex_wait", "futex_wake", "futex_wake_all")

if native is not None:
    from ._native import (compare_and_set_int, compare_and_set_long, futex_wait, futex_wake, futex_wake_all,
                          get_and_add_int, get_and_add_long, get_int_acquire, get_int_volatile, get_long_acquire,
                          get_long_opaque, get_long_volatile, put_int_opaque, put_int_release, put_int_volatile,
                          put_long_opaque, put_long_release, put_long_volatile)
else:
    from ._ctypes_atomics import (compare_and_set_int, compare_and_set_long, futex_wait, futex_wake,
                                  futex_wake_all, get_and_add_int, get_and_add_long, get_int_acquire,
                                  get_int_volatile, get_long_acquire, get_long_opaque, get_long_volatile,
                                  put_int_opaque, put_int_release, put_int_volatile, put_long_opaque,
                                  put_long_release, put_long_volatile)

__all__ = list(_NAMES)
