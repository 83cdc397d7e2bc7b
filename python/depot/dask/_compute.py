"""One call of the scheduler (``Compute``) and the batches it submits (``Batch``).

Every object a worker stores has an id the pool chose before sending the batch: the pool's token, the compute's
number, a counter. So whatever a dead or cancelled worker left behind can be found by its prefix and deleted.
"""

import concurrent.futures
import itertools
import weakref

from depot.ids import ID_LENGTH, ObjectId

from ._functions import ComputeFunctions
from ._refs import Held

TOKEN_LENGTH = 8
COMPUTE_LENGTH = 4
PREFIX_LENGTH = TOKEN_LENGTH + COMPUTE_LENGTH
COUNTER_LENGTH = ID_LENGTH - PREFIX_LENGTH

#: the computes running in this process, by id prefix (for ``fetch_held``)
_running = weakref.WeakValueDictionary()


def fetch_held(held):
    """A ``Held`` result of a compute running in this process (a callback's view of a result), read zero-copy."""
    compute = _running.get(bytes(held.oid)[:PREFIX_LENGTH])
    if compute is None:
        raise KeyError("%r belongs to no depot.dask compute running in this process" % (held,))
    return compute.pool.fetch(compute, held)


class Compute:
    """One call of the scheduler: its id prefix, its objects' pins, whether it was abandoned, and what placement and
    continuations know of its graph. ``pool`` (None in tests of the policies) reads its held results."""

    def __init__(self, token, number, pool=None):
        self.pool = pool
        self.prefix = token + number.to_bytes(COMPUTE_LENGTH, "little")
        _running[self.prefix] = self
        self._counter = itertools.count(1)
        self.abandoned = False
        self.functions = ComputeFunctions()
        #: raw ids of held results their holders were asked to store in Depot
        self.published = set()
        #: ``get_async``'s graph, dependents (key -> keys that need it) and dependencies (key -> keys it needs), once
        #: its start-state callback has run
        self.dsk = None
        self.dependents = None
        self.dependencies = None
        #: ``get_async``'s cache (the scheduler's ``_Results``: key -> what travels for its result), and its
        #: tasks per batch; continuations only for batches of one
        self.results = None
        self.chunksize = None
        #: continuations (``_continuations``) sent: key -> raw id; and those that ran: key -> ``(result, failed)``,
        #: until ``get_async`` submits the key
        self.continued = {}
        self.precomputed = {}
        #: key -> seconds its task ran in a worker, as the worker measured it (``task_seconds``)
        self.task_seconds = {}
        #: key -> ``(pid, raw id)``: the worker its batch, or the batch it is a continuation of, went to last, and
        #: the id of its result there
        self.sent = {}
        #: placement: key -> pid of the worker that claimed it (``_placement.claim``)
        self.homes = {}
        #: placement of the tasks ready at the start: key -> index of the worker whose share of them it is
        #: (``_placement.split_roots``)
        self.roots = {}
        #: ``get_async``'s list of tasks ready and not yet submitted (its ``state["ready"]``), once its start-state
        #: callback has run; read here only for its length
        self.unsubmitted = None

    def new_oid(self):
        return ObjectId(self.prefix + next(self._counter).to_bytes(COUNTER_LENGTH, "little"))

    def owns(self, oid):
        return bytes(oid)[:PREFIX_LENGTH] == self.prefix


class Batch:
    """Tasks sent to a worker in one message: ``body`` and ``used`` are its pickle and the by-value functions it
    refers to (kept after it is sent: a batch given back goes to another worker), ``worker`` is where it went,
    ``future`` what ``get_async`` waits on."""

    __slots__ = ("id", "compute", "keys", "oids", "held", "body", "used", "ended", "worker", "taking_back",
                 "continued", "future")

    def __init__(self, batch_id, compute, keys, oids, held, body, used):
        self.id = batch_id
        self.compute = compute
        self.keys = keys
        self.oids = oids
        self.held = held
        self.body = body
        self.used = used
        #: its future was completed with its results or its failure (``Pool._end``)
        self.ended = False
        self.future = concurrent.futures.Future()
        self.worker = None
        #: its worker was asked to give it back (``Unqueue``) and has not answered yet
        self.taking_back = False
        #: the keys of the continuations sent with it
        self.continued = ()

    def names(self):
        """``"task%s %s"``: the batch's tasks, for messages."""
        return "task%s %s" % ("s" if len(self.keys) > 1 else "", ", ".join(repr(k) for k in self.keys))


def held_inputs(fn, args):
    """The ``Held`` inputs of a batch as ``get_async`` submits it (``batch_execute_tasks`` of ``(key, (task,
    data), ...)``)."""
    from dask.local import batch_execute_tasks
    if fn is not batch_execute_tasks:
        return []
    out = []
    for a in args:
        try:
            data = a[1][1]
        except (IndexError, TypeError):
            continue
        if isinstance(data, dict):
            out.extend(v for v in data.values() if isinstance(v, Held))
    return out


def held_by(results, pid):
    """The raw ids of the results in a worker's ``results`` (``[(key, (result, pid), failed)]``) that worker
    ``pid`` holds."""
    return [bytes(r[1][0].oid) for r in results if not r[2] and isinstance(r[1][0], Held) and r[1][0].holder == pid]
