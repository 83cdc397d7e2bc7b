"""The Depot shuffle in dask-expr (``dask.dataframe`` from Dask 2025: 2026.8.0 here).

dask-expr turns an abstract ``Shuffle`` expression into a concrete one in ``Shuffle._lower`` by the method's
name ("p2p", "disk", "simple", "tasks") and raises for any other; there is no public registry. This module,
the only place that depends on it, wraps ``Shuffle._lower``: for the method "depot" it returns a
``DepotShuffle`` (a ``SimpleShuffle`` with its own task graph), for every other method it calls Dask's
``_lower`` unchanged. ``set_index``, ``sort_values``, ``shuffle``, and merges and groupbys that shuffle all
lower through it. ``install`` returns False, and Dask's shuffles stay as they are, when the classes are not
there as this was written for.

The distributed client optimises a graph without Dask's blockwise fusion (its ``optimize()`` stops before the
"fused" stage), so every blockwise step before a shuffle (making or reading a partition, converting its
strings, the ``_partitions`` column, a projection) would be a task of its own, and on a depot.dask.distributed
worker each of their results would be copied into the store before the next step reads it. So the input of a
``DepotShuffle`` is fused (Dask's own ``optimize_blockwise_fusion``, applied to the input alone) when the
shuffle is lowered, and again when it is simplified after lowering, which pushes the projections above the
shuffle into its input: one task per input partition, whose result is the map's input. Only an input made of
blockwise steps alone (from reading or making the data) is fused: a fused group's internal tasks name their
outside dependencies, which a later simplification could rename.

Nor does it fuse the blockwise steps after a shuffle (selecting a column, a partition's sort, a reduction's
chunk): each would be a task of its own, and its worker would hold each output partition until the next
task, a round trip to the scheduler away, while it builds the next one. So a ``DepotShuffle`` takes in the
blockwise expression that reads it, when that expression reads nothing else and nothing else reads the
shuffle (``_simplify_up``, while the lowered expression is simplified): its reduce tasks run those steps on
the partition they build, in the same task (Dask's ``Task.fuse``), and the partition is freed when the task
ends. The steps are kept as ``Steps``, not as operands, so that dask-expr does not take them for inputs of
the shuffle.
"""

from dask import config

from ._shuffle_steps import Steps, absorbs, fused_reduce
from ._shuffle_tasks import ShuffleSpec, map_partition, reduce_partition


def install(choose, directory):
    """Wraps ``Shuffle._lower``; ``choose(explicit, configured)`` names the method to use and ``directory()``
    the store of tasks that do not run in a Depot worker. True when installed."""
    try:
        from dask.dataframe.dask_expr._repartition import Repartition
        from dask.dataframe.dask_expr._expr import Blockwise, Fused, optimize_blockwise_fusion
        from dask.dataframe.dask_expr._shuffle import Shuffle, SimpleShuffle
    except ImportError:
        return False
    original = Shuffle.__dict__.get("_lower")
    if original is None:
        return False
    if getattr(original, "_depot", False):
        return True
    needed = {"frame", "partitioning_index", "npartitions_out", "ignore_index", "options",
              "original_partitioning_index", "_partitions"}
    if not needed <= set(SimpleShuffle._parameters):
        return False

    class DepotShuffle(SimpleShuffle):
        """A shuffle whose map tasks write their slices into Depot and whose reduce tasks read them in place,
        then run the blockwise ``steps`` fused after them."""

        _parameters = SimpleShuffle._parameters + ["steps"]
        _defaults = {**SimpleShuffle._defaults, "steps": None}

        @property
        def _meta(self):
            return self.steps.meta if self.steps else self.frame._meta

        def _divisions(self):
            return self.steps.divisions() if self.steps else super()._divisions()

        @property
        def _is_length_preserving(self):
            return not self.steps or self.steps.length_preserving

        @property
        def _filter_passthrough(self):
            return not self.steps

        @property
        def unique_partition_mapping_columns_from_shuffle(self):
            if self.steps:
                return self.steps.unique_partition_mapping_columns
            return super().unique_partition_mapping_columns_from_shuffle

        def _layer(self):
            token = self._name.rsplit("-", 1)[-1]
            map_name = "depot-shuffle-map-" + token
            filtered = self._partitions if self._filtered else None
            spec = ShuffleSpec(token, self.partitioning_index, self.npartitions_out, filtered, self.ignore_index,
                               self.frame._meta, directory())
            dsk = {(map_name, i): (map_partition, (self.frame._name, i), spec, i)
                   for i in range(self.frame.npartitions)}
            maps = tuple(dsk)  # every reducer depends on every map: a map's output lives until the last one ran
            for i, p in enumerate(self._partitions):
                if self.steps:
                    dsk[(self._name, i)] = fused_reduce(self._name, i, self.steps, spec, p, maps)
                else:
                    dsk[(self._name, i)] = (reduce_partition, spec, p) + maps
            return dsk

        def _simplify_up(self, parent, dependents):
            if not self.steps:  # the projections and filters Dask moves below a shuffle; never below steps
                out = super()._simplify_up(parent, dependents)
                if out is not None:
                    return out
            if not absorbs(self, parent, dependents, Blockwise, Fused):
                return None
            steps = (self.steps or Steps()).then(parent, self._name)
            return type(self)(*self.operands[:-1], steps)

        def _simplify_down(self):
            if not _fusable(self.frame):
                return None
            fused = _fused(self.frame.simplify())
            return None if fused is None else type(self)(fused, *self.operands[1:])

    def _lower(self):
        if choose(self.method, config.get("dataframe.shuffle.method", None)) != "depot":
            return original(self)
        frame = self.frame
        if self.npartitions_out < frame.npartitions:
            frame = Repartition(frame, new_partitions=self.npartitions_out)
        frame = frame.lower_completely()
        fused = _fused(frame)
        if fused is not None:
            frame = fused
        return DepotShuffle(frame, self.partitioning_index, self.npartitions_out, self.ignore_index, self.options,
                            self.original_partitioning_index)

    def _fusable(frame):
        return isinstance(frame, Blockwise) and not isinstance(frame, Fused)

    def _fused(frame):
        """``frame`` as one fused blockwise task per partition, or None: it is one already, or it depends on
        some expression outside its blockwise steps."""
        if not _fusable(frame):
            return None
        fused = optimize_blockwise_fusion(frame)
        if not isinstance(fused, Fused) or fused.dependencies():
            return None
        return fused

    _lower._depot = True
    _lower.__wrapped__ = original
    Shuffle._lower = _lower
    return True
