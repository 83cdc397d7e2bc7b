"""Where the supported releases of ``distributed`` differ, and how ``depot.dask.distributed`` meets each one.

Supported: Debian's 2022.12.1 and 2026.7.1 (the current release); both are tested. Each difference below has its
version test beside it. The rest of the package uses public extension points that both releases share.

1. ``Comm.handshake_info``: a static method in 2022.12, an instance method (it reads ``self.same_host``) in
   2026.7. ``DepotTCP.handshake_info`` is an instance method calling ``super()``, which reaches either, so no
   switch is needed; ``HANDSHAKE_INFO_NEEDS_A_COMM`` says which one is installed.
2. ``Worker.get_data``: 2022.12 takes a ``max_connections`` keyword, 2026.7 does not. The Depot worker passes
   on whatever keywords the request carries (``Worker.get_data(comm, keys, **rest)``), so no switch is needed.
3. Task threads: 2026.7 runs each task in a copy of ``Worker.execute``'s ``contextvars`` context
   (``distributed.utils.run_in_executor_with_context``), 2022.12 does not; there the worker's task context is
   found through ``distributed.get_worker()`` (``TASKS_SEE_EXECUTE_CONTEXT``).
4. ``Client.who_has``: keys as the keys' strings in 2022.12, as the keys themselves in 2026.7 (``holders``).
5. Periodic callbacks: ``distributed.compatibility.PeriodicCallback`` is deprecated in 2026.7; tornado's own
   (``tornado.ioloop.PeriodicCallback``, tornado >= 6.2, which both releases require) serves both.
6. Command line: both have ``dask scheduler`` and ``dask worker``; 2022.12 also has the older
   ``dask-scheduler`` and ``dask-worker`` programs (``dask_command``).
"""

from __future__ import annotations

import os
import re
import sys

import distributed
import distributed.utils

__all__ = ["DISTRIBUTED_VERSION", "HANDSHAKE_INFO_NEEDS_A_COMM", "TASKS_SEE_EXECUTE_CONTEXT", "dask_command",
           "holders", "version_tuple"]


def version_tuple(text):
    """The leading numbers of a version string: ``"2022.12.1+ds.1"`` is ``(2022, 12, 1)``."""
    match = re.match(r"\d+(\.\d+)*", text or "")
    return tuple(int(part) for part in match.group(0).split(".")) if match else ()


#: The installed release of ``distributed``, as numbers: (2022, 12, 1), (2026, 7, 1).
DISTRIBUTED_VERSION = version_tuple(distributed.__version__)

# 1. an instance method from the 2023 releases on (a static one in 2022.12)
HANDSHAKE_INFO_NEEDS_A_COMM = not isinstance(distributed.comm.core.Comm.__dict__["handshake_info"], staticmethod)

# 3. tasks run in a copy of execute()'s context: 2026.7 yes, 2022.12 no
TASKS_SEE_EXECUTE_CONTEXT = hasattr(distributed.utils, "run_in_executor_with_context")


def holders(who_has, key):
    """The workers that ``Client.who_has`` (or ``Scheduler.who_has``) lists for ``key``: keyed by the key in
    2026.7, by its string in 2022.12."""
    found = who_has.get(key)
    if found is None and not isinstance(key, str):
        found = who_has.get(str(key))
    return tuple(found or ())


def dask_command(name, python=None):
    """The command line that runs ``dask NAME`` (``scheduler``, ``worker``) with the Dask installed beside
    ``python`` (default: this interpreter): the ``dask`` program in its directory, else ``python -m
    distributed.cli.dask_NAME`` (both releases ship that module)."""
    python = python or sys.executable
    program = os.path.join(os.path.dirname(python), "dask")
    if os.access(program, os.X_OK):
        return [program, name]
    return [python, "-m", "distributed.cli.dask_" + name]
