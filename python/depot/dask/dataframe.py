"""Dask DataFrame shuffles through Depot: ``set_index``, ``sort_values``, ``shuffle`` (and merges and groupbys
that shuffle) with map tasks that write their slices into shared memory and reduce tasks that read them in
place. See docs/SHUFFLE.md ("Dask DataFrames") for its use and docs/DESIGN.md ("Dask DataFrame shuffles") for
the model.

    import depot.dask.dataframe                  # adds the shuffle method "depot" to Dask's DataFrames
    df.set_index("key", shuffle_method="depot")  # dask-expr (Dask 2025 and later); "shuffle=" before

The method "depot" is used when asked for (per call, or with the configuration ``dataframe.shuffle.method``
(dask-expr) / ``shuffle`` (legacy) set to "depot"), and, when no method is given in the call, whenever the
graph is built for Depot: a ``depot.dask.Scheduler`` is the configured scheduler
(``dask.config.set(scheduler=s)``), or the default ``distributed`` client's scheduler talks ``depot://`` (a
``depot.dask.distributed`` cluster). A method given in the call always wins, so ``shuffle_method="tasks"``
keeps Dask's own task shuffle on Depot too, and so does ``dask.config.set({"depot.auto-shuffle": False})``
for every call that names no method.

Dask has no public hook for a new shuffle method; the internal one each version has is wrapped in one small
module (``_shuffle_expr``, ``_shuffle_legacy``). When it is not as expected, ``install()`` warns once and
returns False, and every shuffle stays Dask's own.
"""

import sys
import warnings

__all__ = ["AUTO_CONFIG_NAME", "METHOD", "install", "installed", "on_depot"]

#: the name of the shuffle method
METHOD = "depot"

_installed = None


def on_depot():
    """True when the graph being built will run on Depot: a ``depot.dask.Scheduler`` is the configured
    scheduler, or the default ``distributed`` client's scheduler address is ``depot://``."""
    return _depot_scheduler() is not None or _depot_distributed()


def _depot_scheduler():
    from dask import config
    from .scheduler import Scheduler
    s = config.get("scheduler", None)
    s = getattr(s, "__self__", s)  # Scheduler.get, a bound method
    return s if isinstance(s, Scheduler) else None


def _depot_distributed():
    distributed = sys.modules.get("distributed")
    if distributed is None:
        return False
    try:
        client = distributed.default_client()
    except ValueError:
        return False
    address = getattr(getattr(client, "scheduler", None), "address", "") or ""
    return address.startswith("depot://")


#: configuration key: False keeps Dask's configured method on Depot too when a call names none
AUTO_CONFIG_NAME = "depot.auto-shuffle"


def choose(explicit, configured):
    """The shuffle method to use: the one given in the call, else "depot" on Depot (unless the configuration
    ``depot.auto-shuffle`` is False), else the configured one."""
    from dask import config
    if explicit:
        return explicit
    if configured == METHOD or (config.get(AUTO_CONFIG_NAME, True) and on_depot()):
        return METHOD
    return configured


def _directory():
    """The store of tasks that run outside Depot workers: the configured depot.dask Scheduler's, else
    ``depot.default_directory()``."""
    s = _depot_scheduler()
    if s is not None:
        return s.directory
    from ..client import default_directory
    import os
    return os.path.abspath(default_directory())


def install():
    """Adds the shuffle method "depot" to this process's Dask DataFrames (harmless twice). Returns False, with
    one warning, when this Dask version's hook is not as expected; Dask's shuffles then stay its own."""
    global _installed
    if _installed is not None:
        return _installed
    import dask.dataframe as dd
    if _is_expr(dd):
        from . import _shuffle_expr as hook
    else:
        from . import _shuffle_legacy as hook
    try:
        ok = hook.install(choose, _directory)
    except Exception as e:  # a Dask whose internals moved: keep its own shuffles
        warnings.warn("depot.dask.dataframe: cannot add the 'depot' shuffle to Dask %s (%s: %s); DataFrame "
                      "shuffles stay Dask's own" % (_version(), type(e).__name__, e), RuntimeWarning)
        ok = False
    else:
        if not ok:
            warnings.warn("depot.dask.dataframe: Dask %s's shuffle is not what %s was written for; DataFrame "
                          "shuffles stay Dask's own" % (_version(), hook.__name__), RuntimeWarning)
    _installed = ok
    return ok


def installed():
    """True when the method "depot" is available in this process."""
    return bool(_installed)


def _is_expr(dd):
    try:
        from dask.dataframe.dask_expr import DataFrame
    except ImportError:
        return False
    return dd.DataFrame is DataFrame


def _version():
    import dask
    return dask.__version__


install()
