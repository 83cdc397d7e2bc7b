"""The blockwise steps a dask-expr ``DepotShuffle`` runs in its reduce tasks (see ``_shuffle_expr``).

A blockwise expression builds partition i's task from the keys ``(input name, i)`` of its inputs
(``Blockwise._task``, which Dask's own ``Fused`` relies on too). Each step is kept with the name of the
shuffle it was taken into, which is the key its task reads: in the fused task the reduce is keyed by the
first step's input name, each step by the next one's, and the last one's result becomes the task's.
"""

from dask._task_spec import GraphNode, Task, TaskRef

from ._shuffle_tasks import keep_result_private, reduce_partition_for_steps

__all__ = ["Steps", "absorbs", "fused_reduce"]

#: the partition whose task ``absorbs`` builds to check which keys a step reads
_PROBE = 0


class Steps:
    """Blockwise expressions run after a reduce, first to last, each with the name of the expression it reads.
    Not an ``Expr``: dask-expr does not walk into it. Tokenized by the names, which tokenize the expressions."""

    __slots__ = ("exprs", "inputs")

    def __init__(self, exprs=(), inputs=()):
        self.exprs = tuple(exprs)
        self.inputs = tuple(inputs)

    def then(self, expr, input_name):
        """These steps and then ``expr``, which reads the expression named ``input_name``."""
        return Steps(self.exprs + (expr,), self.inputs + (input_name,))

    def __bool__(self):
        return bool(self.exprs)

    def __dask_tokenize__(self):
        return ("depot-shuffle-steps",) + tuple((e._name, n) for e, n in zip(self.exprs, self.inputs))

    def __repr__(self):
        return "Steps(%s)" % ", ".join(type(e).__name__ for e in self.exprs)

    @property
    def meta(self):
        return self.exprs[-1]._meta

    def divisions(self):
        """The last step's: a step may know them where the shuffle does not (``set_index``'s)."""
        return self.exprs[-1]._divisions()

    @property
    def length_preserving(self):
        return all(getattr(e, "_is_length_preserving", False) for e in self.exprs)

    @property
    def unique_partition_mapping_columns(self):
        return self.exprs[-1].unique_partition_mapping_columns_from_shuffle


def absorbs(shuffle, parent, dependents, blockwise, fused):
    """True when ``shuffle`` can run ``parent`` in its reduce tasks: ``parent`` is a blockwise expression (not
    already a fused group) of the same partitions that reads ``shuffle`` alone, each of its tasks reading the
    same partition of it, and nothing else reads ``shuffle``; ``shuffle`` makes all its partitions (the steps'
    divisions are of all of them)."""
    if not isinstance(parent, blockwise) or isinstance(parent, fused) or shuffle._filtered:
        return False
    if parent.npartitions != shuffle.npartitions:
        return False
    if any(d._name != shuffle._name for d in parent.dependencies()):
        return False
    readers = {r()._name for r in dependents.get(shuffle._name, ()) if r() is not None}
    if readers != {parent._name}:
        return False
    try:
        probe = parent._task(("depot-shuffle-probe", _PROBE), _PROBE)
    except Exception:  # an expression whose tasks are not built one partition at a time: left as it is
        return False
    return isinstance(probe, GraphNode) and set(probe.dependencies) == {(shuffle._name, _PROBE)}


def fused_reduce(name, i, steps, spec, partition, maps):
    """Task ``(name, i)``: the reduce of ``partition`` from the map outputs ``maps`` (their keys), then
    ``steps``, whose result the task returns, kept in the worker's memory as the partition would be."""
    reduce = Task((steps.inputs[0], i), reduce_partition_for_steps, spec, partition, *(TaskRef(m) for m in maps))
    tasks = [reduce]
    outputs = steps.inputs[1:] + (steps.exprs[-1]._name,)
    for expr, output in zip(steps.exprs, outputs):
        tasks.append(expr._task((output, i), i))
    tasks.append(Task((name, i), keep_result_private, TaskRef((outputs[-1], i))))
    return Task.fuse(*tasks, key=(name, i))
