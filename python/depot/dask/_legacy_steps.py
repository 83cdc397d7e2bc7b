"""The blockwise steps after a Depot shuffle in Dask's legacy DataFrame, run in its reduce tasks (see
``_shuffle_legacy``, whose ``install`` makes ``optimize`` the collections' default optimiser).

The graph is a HighLevelGraph after Dask's own optimisation: a shuffle's reduce layer (materialised tasks
``(reduce_partition, spec, p, *map keys)``) and, when its one reader is blockwise, that reader's layer, whose
tasks read partition p of it. ``absorb_steps`` merges the two, and when the reader begins by selecting columns
gives the maps (a blockwise layer holding the ``ShuffleSpec``) a spec that stores those alone.
"""

from ._shuffle_tasks import ShuffleSpec, keep_result_private, reduce_partition_for_steps

__all__ = ["MAP_TOKEN", "REDUCE_PREFIX", "absorb_steps", "optimize"]

#: the prefix of a Depot shuffle's reduce layer, and the token of its maps' layer ("depot-shuffle-map-...")
REDUCE_PREFIX = "depot-shuffle-"
MAP_TOKEN = REDUCE_PREFIX + "map"


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
    for name in [n for n in layers if n.startswith(REDUCE_PREFIX) and not n.startswith(MAP_TOKEN + "-")]:
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
