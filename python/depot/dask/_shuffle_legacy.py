"""The Depot shuffle in Dask's legacy DataFrame (``dask.dataframe`` before dask-expr: Dask 2022.12.1 here).

Dask offers no public way to add a shuffle method: ``dask.dataframe.shuffle.rearrange_by_column`` picks "disk",
"tasks" or "p2p" by name and raises for any other. This module, the only place that depends on it, wraps that
function (and ``shuffle``, whose column fast path only the task method gets) in the module Dask's own
``set_index``, ``sort_values`` and ``DataFrame.shuffle`` call through; for every other method it calls Dask's
function unchanged. ``install`` returns False, and Dask's shuffles stay as they are, when the functions are
not there with the signatures this was written for.

The steps after a shuffle (selecting a column, a reduction's chunk) are a blockwise layer that Dask's
optimisation fuses among themselves but not with the reduce tasks, so each would be a task of its own and its
worker would hold each output partition until that task came. ``install`` also makes the legacy collections'
default optimiser (their ``__dask_optimize__``, a ``globalmethod`` that the configuration key
``dataframe_optimize`` still overrides) Dask's own followed by ``_legacy_steps.absorb_steps``: a blockwise
layer that alone reads a Depot shuffle's reduce layer, partition for partition, runs in the reduce tasks. (Not
the configuration key itself: a function in Dask's global configuration breaks what serialises it, such as
``SSHCluster``.)
"""

import inspect

from dask import config

from ._legacy_steps import MAP_TOKEN, REDUCE_PREFIX, optimize
from ._shuffle_tasks import ShuffleSpec, map_partition, reduce_partition

_REARRANGE = ["df", "col", "npartitions", "max_branch", "shuffle", "compute", "ignore_index"]
_SHUFFLE = ["df", "index", "shuffle", "npartitions", "max_branch", "ignore_index", "compute"]


def _params(f):
    return list(inspect.signature(f).parameters)


def install(choose, directory):
    """Wraps the module's functions; ``choose(explicit, configured)`` names the method to use and
    ``directory()`` the store of tasks that do not run in a Depot worker. True when installed."""
    import dask.dataframe.shuffle as ds
    if getattr(ds.rearrange_by_column, "_depot", False):
        return True
    if _params(ds.rearrange_by_column) != _REARRANGE or _params(ds.shuffle) != _SHUFFLE:
        return False
    original_rearrange, original_shuffle = ds.rearrange_by_column, ds.shuffle

    def rearrange_by_column(df, col, npartitions=None, max_branch=None, shuffle=None, compute=None,
                            ignore_index=False):
        if choose(shuffle, config.get("shuffle", None)) != "depot":
            return original_rearrange(df, col, npartitions, max_branch, shuffle, compute, ignore_index)
        if npartitions is not None and npartitions < df.npartitions:
            df = df.repartition(npartitions=npartitions)
        return depot_rearrange(df, col, npartitions or df.npartitions, ignore_index, directory())

    def shuffle(df, index, shuffle=None, npartitions=None, max_branch=32, ignore_index=False, compute=None):
        import pandas as pd
        if choose(shuffle, config.get("shuffle", None)) == "depot":
            columns = [index] if isinstance(index, str) else index
            if pd.api.types.is_list_like(columns) and not hasattr(columns, "dask") \
                    and set(columns) <= set(df.columns):
                # as Dask's task method: hash the columns in the map tasks, no "_partitions" column
                return rearrange_by_column(df, list(columns), npartitions, max_branch, "depot", compute,
                                           ignore_index)
        return original_shuffle(df, index, shuffle=shuffle, npartitions=npartitions, max_branch=max_branch,
                                ignore_index=ignore_index, compute=compute)

    rearrange_by_column._depot = shuffle._depot = True
    rearrange_by_column.__wrapped__, shuffle.__wrapped__ = original_rearrange, original_shuffle
    ds.rearrange_by_column, ds.shuffle = rearrange_by_column, shuffle
    _install_optimize()
    return True


def _install_optimize():
    """Makes ``optimize`` the default of the legacy collections' ``__dask_optimize__`` where it is Dask's own."""
    from dask.context import globalmethod
    from dask.dataframe import core
    from dask.dataframe.optimize import optimize as dask_optimize
    for cls in (core.Scalar, core._Frame):
        method = cls.__dict__.get("__dask_optimize__")
        if getattr(method, "_default", None) is dask_optimize:
            cls.__dask_optimize__ = globalmethod(optimize, key=method._key, falsey=method._falsey)


def depot_rearrange(df, col, npartitions, ignore_index, directory):
    """``df`` shuffled by ``col`` into ``npartitions`` partitions through Depot (a new collection).

    The map tasks are a blockwise layer (``map_partitions``), so Dask's blockwise optimisation fuses them with
    the blockwise tasks that make their input (reading, ``from_map``, the ``_partitions`` column of
    ``set_index``): the input partition is not stored as a result of its own first."""
    import pandas as pd
    from dask.base import tokenize
    from dask.dataframe.core import new_dd_object
    from dask.highlevelgraph import HighLevelGraph
    token = tokenize(df, col, npartitions, ignore_index, "depot-shuffle")
    name = REDUCE_PREFIX + token
    meta = df._meta.reset_index(drop=True) if ignore_index else df._meta
    spec = ShuffleSpec(token, col, npartitions, None, ignore_index, meta, directory)
    maps = df.map_partitions(map_partition, spec, meta=pd.Series([], dtype=object), enforce_metadata=False,
                             transform_divisions=False, align_dataframes=False, token=MAP_TOKEN)
    keys = tuple(maps.__dask_keys__())  # every reducer depends on every map: a map's output lives until the last
    dsk = {(name, p): (reduce_partition, spec, p) + keys for p in range(npartitions)}
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=[maps])
    return new_dd_object(graph, name, meta, [None] * (npartitions + 1))
