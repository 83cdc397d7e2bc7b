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
"""

from dask import config

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
        """A shuffle whose map tasks write their slices into Depot and whose reduce tasks read them in place."""

        def _layer(self):
            token = self._name.rsplit("-", 1)[-1]
            map_name = "depot-shuffle-map-" + token
            filtered = self._partitions if self._filtered else None
            spec = ShuffleSpec(token, self.partitioning_index, self.npartitions_out, filtered, self.ignore_index,
                               self._meta, directory())
            dsk = {(map_name, i): (map_partition, (self.frame._name, i), spec, i)
                   for i in range(self.frame.npartitions)}
            maps = tuple(dsk)  # every reducer depends on every map: a map's output lives until the last one ran
            for i, p in enumerate(self._partitions):
                dsk[(self._name, i)] = (reduce_partition, spec, p) + maps
            return dsk

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
