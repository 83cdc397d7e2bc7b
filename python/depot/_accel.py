"""Which implementation of the hot paths this process uses: the C extension ``depot._native``, or ``ctypes``.

``depot._native`` is compiled when the package is installed (``pip install``; the wheel built where a compiler
is found). Without it, or with ``DEPOT_NATIVE=0`` in the environment, the client runs on ``ctypes`` alone
(``depot._ctypes_atomics`` and the Python pin protocol of ``_index`` and ``_pins``): the same operations on the
same shared memory, each atomic access a ``ctypes`` call. ``DEPOT_NATIVE=1`` insists on the extension (an
ImportError without it), so that a test run knows which path it runs. The choice is made once, at import.

The extension reads the store's layout from ``depot._layout``, handed over here by ``configure``: the C code has
no offsets of its own.
"""

import os

from . import _layout
from .errors import StoreFormatError

__all__ = ["NATIVE_ENV_NAME", "native", "layout_table"]

#: the environment variable that chooses the implementation: "0" ctypes, "1" the extension, unset: the extension
#: when it is built
NATIVE_ENV_NAME = "DEPOT_NATIVE"


def layout_table():
    """Every constant of ``depot._layout`` as ``{"Class.NAME": value}``, and its module-level constants by name."""
    table = {}
    for name, value in vars(_layout).items():
        if isinstance(value, type) and value.__module__ == _layout.__name__:
            table.update(("%s.%s" % (name, k), v) for k, v in vars(value).items() if k.isupper())
        elif name.isupper() and isinstance(value, int):
            table[name] = value
    return table


def _load():
    choice = os.environ.get(NATIVE_ENV_NAME, "").strip()
    if choice == "0":
        return None
    try:
        from . import _native
    except ImportError as e:
        if choice == "1":
            raise ImportError("%s=1 asks for the C extension depot._native, which is not built here (%s); install "
                              "the package with a C compiler present (pip install), or unset %s to run on ctypes"
                              % (NATIVE_ENV_NAME, e, NATIVE_ENV_NAME)) from None
        return None
    _native.configure(layout_table(), StoreFormatError)
    return _native


#: the C extension, configured, or None: the ctypes path
native = _load()
