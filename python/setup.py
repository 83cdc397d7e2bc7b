"""The optional C extension ``depot._native`` (the client's hot paths; see depot/_accel.py). Everything else about
the package is in pyproject.toml. ``optional=True``: without a C compiler (or Python's headers) the build goes
on without it, and the client runs on ctypes."""

from setuptools import Extension, setup

#: the extension's sources, one concept each, sharing the private header native/native.h (which maps them)
NATIVE_SOURCES = ["native/layout.c", "native/atomics.c", "native/slot.c", "native/heap.c", "native/create.c",
                  "native/module.c"]

setup(ext_modules=[Extension("depot._native", NATIVE_SOURCES, depends=["native/native.h"], optional=True,
                             extra_compile_args=["-O2", "-g0", "-std=gnu11", "-Wall"])])
