"""The optional C extension ``depot._native`` (the client's hot paths; see depot/_accel.py). Everything else about
the package is in pyproject.toml. ``optional=True``: without a C compiler (or Python's headers) the build goes
on without it, and the client runs on ctypes."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("depot._native", ["depot/_native.c"], optional=True,
                             extra_compile_args=["-O2", "-g0", "-std=gnu11", "-Wall"])])
