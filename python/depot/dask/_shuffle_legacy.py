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
``dataframe_optimize`` still overrides) Dask's own followed by ``absorb_steps``: a blockwise layer that alone
reads a Depot shuffle's reduce layer, partition for partition, runs in the reduce tasks. (Not the
configuration key itself: a function in Dask's global configuration breaks what serialises it, such as
``SSHCluster``.)
"""

import inspect

from dask import config

from ._shuffle_tasks import (ShuffleSpec, keep_result_private, map_partition, reduce_partition,
                             reduce_partition_for_steps)

#: the prefix of a Depot shuffle's reduce layer (its maps' layer is "depot-shuffle-map-...")
REDUCE_PREFIX = "depot-shuffle-"
_MAP_PREFIX = "depot-shuffle-map-"

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


def optimize(dsk, keys, **kwargs):
    """Dask's DataFrame optimisation, then ``absorb_steps``."""
    from dask.dataframe.optimize import optimize as dask_optimize
    return absorb_steps(dask_optimize(dsk, keys, **kwargs))


def absorb_steps(graph):
    """``graph`` (a HighLevelGraph) where each blockwise layer that alone reads a Depot shuffle's reduce layer,
    each of its tasks reading the same partition, runs in the reduce tasks: its tasks become the reduce's
    followed by its own, and the reduce layer goes. Anything else, and a layer whose tasks do not have the
    shapes expected, is left as it is."""
    from dask.core import reverse_dict
    from dask.highlevelgraph import HighLevelGraph
    if not isinstance(graph, HighLevelGraph):
        return graph
    layers, dependencies = dict(graph.layers), dict(graph.dependencies)
    dependents = reverse_dict(dependencies)
    for name in [n for n in layers if n.startswith(REDUCE_PREFIX) and not n.startswith(_MAP_PREFIX)]:
        try:
            _absorb(layers, dependencies, dependents, name)
        except Exception:  # a graph of shapes this was not written for: Dask's own optimisation stands
            continue
    return HighLevelGraph(layers, dependencies)


def _absorb(layers, dependencies, dependents, name):
    """Runs the one blockwise reader of the reduce layer ``name`` in the reduce tasks, in ``layers`` and
    ``dependencies``, when it can; changes nothing until the new layers are made."""
    from dask.blockwise import Blockwise
    from dask.core import keys_in_tasks, subs
    from dask.highlevelgraph import MaterializedLayer
    readers = dependents.get(name, set())
    if len(readers) != 1:
        return
    (reader,) = readers
    if not isinstance(layers[reader], Blockwise) or dependencies[reader] != {name}:
        return
    reduces, steps = dict(layers[name]), dict(layers[reader])
    projected = _projected(layers, name, layers[reader], next(iter(reduces.values()))[1])
    fused = {}
    for key, task in steps.items():
        part = (name, key[1]) if isinstance(key, tuple) and len(key) == 2 else None
        if part not in reduces or set(keys_in_tasks(reduces, [task])) != {part}:
            return
        _, spec, p, *maps = reduces[part]
        spec = projected[1] if projected else spec
        fused[key] = (keep_result_private, subs(task, part, (reduce_partition_for_steps, spec, p, *maps)))
    fused_layer = MaterializedLayer(fused, annotations=layers[reader].annotations)
    if projected:
        layers[projected[0]] = projected[2]
    layers[reader] = fused_layer
    dependencies[reader] = dependencies.pop(name)
    del layers[name]


def _projected(layers, name, reader, spec):
    """(name of the maps' layer, projected spec, that layer with it) when the blockwise ``reader`` first selects
    columns of the reduce layer ``name`` and reads nothing else of it, so that the maps need store only those;
    else None."""
    import operator
    from dask.blockwise import Blockwise, blockwise_token
    inputs = [k for k, (arg, ind) in enumerate(reader.indices) if ind is not None and arg == name]
    if len(inputs) != 1 or not isinstance(spec, ShuffleSpec) or spec.keep is not None:
        return None
    token = blockwise_token(inputs[0])
    readers = [t for t in reader.dsk.values() if _mentions(t, token)]
    if len(readers) != 1 or not (isinstance(readers[0], tuple) and len(readers[0]) == 3
                                 and readers[0][0] is operator.getitem and isinstance(readers[0][1], str)
                                 and readers[0][1] == token):
        return None
    literals = {blockwise_token(k): arg for k, (arg, ind) in enumerate(reader.indices) if ind is None}
    selected = readers[0][2]
    selected = literals.get(selected, selected) if isinstance(selected, str) else selected
    columns = [selected] if isinstance(selected, str) else selected
    if not isinstance(columns, list) or not columns or not all(isinstance(c, str) for c in columns) \
            or not set(columns) <= set(spec.meta.columns):
        return None
    holders = [n for n, layer in layers.items() if isinstance(layer, Blockwise)
               and any(arg is spec for arg, ind in layer.indices if ind is None)]
    if len(holders) != 1:
        return None
    maps = layers[holders[0]]
    kept = spec.keeping(columns)
    indices = [(kept if arg is spec and ind is None else arg, ind) for arg, ind in maps.indices]
    return holders[0], kept, Blockwise(maps.output, maps.output_indices, maps.dsk, indices, maps.numblocks,
                                       maps.concatenate, maps.new_axes, maps.output_blocks, maps.annotations,
                                       maps.io_deps)


def _mentions(task, token):
    if isinstance(task, str):
        return task == token
    if isinstance(task, (tuple, list)):
        return any(_mentions(t, token) for t in task)
    if isinstance(task, dict):
        return any(_mentions(t, token) for t in task.values())
    return False


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
    name = "depot-shuffle-" + token
    meta = df._meta.reset_index(drop=True) if ignore_index else df._meta
    spec = ShuffleSpec(token, col, npartitions, None, ignore_index, meta, directory)
    maps = df.map_partitions(map_partition, spec, meta=pd.Series([], dtype=object), enforce_metadata=False,
                             transform_divisions=False, align_dataframes=False, token="depot-shuffle-map")
    keys = tuple(maps.__dask_keys__())  # every reducer depends on every map: a map's output lives until the last
    dsk = {(name, p): (reduce_partition, spec, p) + keys for p in range(npartitions)}
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=[maps])
    return new_dd_object(graph, name, meta, [None] * (npartitions + 1))
