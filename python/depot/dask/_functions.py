"""Functions that travel by value (defined in ``__main__``, lambdas, closures: what cloudpickle cannot pickle by
reference), pickled once per compute and worker instead of once per task.

The scheduler pickles each batch with a ``TaskPickler``: such a function becomes a persistent id (a number), and
its cloudpickle bytes go with the first message to each worker that needs it. The worker's ``FunctionTable``
keeps the functions it was sent, and forgets the ones the scheduler tells it to (the scheduler keeps at most
``WORKER_TABLE_LIMIT`` per worker, mirroring the worker's table). A compute numbers its functions afresh, so
each compute takes a new snapshot of a function's globals, as cloudpickle does for every task.

Pickling a function by value costs hundreds of microseconds (its code object, its globals); for graphs of many
small tasks it was most of the scheduler's time per task.
"""

import collections
import io
import itertools
import pickle
import types

WORKER_TABLE_LIMIT = 1024

_numbers = itertools.count(1)


def _by_value(fn):
    try:
        from cloudpickle.cloudpickle import _should_pickle_by_reference
    except ImportError:  # another cloudpickle: the names that it can never import by reference
        return fn.__module__ == "__main__" or "<" in fn.__qualname__
    return not _should_pickle_by_reference(fn)


class ComputeFunctions:
    """The functions one compute has pickled: ``id(fn) -> (number or None, fn, cloudpickle bytes or None)``, None
    for those that travel by reference; ``fn`` is held so that its id is not reused while the compute runs."""

    def __init__(self):
        self._by_id = {}

    def number(self, fn):
        """The number of a by-value function (its bytes made on first use), or None."""
        entry = self._by_id.get(id(fn))
        if entry is None:
            if _by_value(fn):
                import cloudpickle
                entry = (next(_numbers), fn, cloudpickle.dumps(fn, protocol=5))
            else:
                entry = (None, fn, None)
            self._by_id[id(fn)] = entry
        return entry[0]

    def blob(self, fn):
        return self._by_id[id(fn)][2]


def _pickler_class():
    import cloudpickle

    class TaskPickler(cloudpickle.Pickler):
        """cloudpickle, with by-value functions replaced by their numbers (``used``: number -> function)."""

        def __init__(self, file, functions):
            super().__init__(file, protocol=5)
            self._functions = functions
            self.used = {}

        def persistent_id(self, obj):
            if type(obj) is not types.FunctionType:
                return None
            number = self._functions.number(obj)
            if number is not None:
                self.used[number] = obj
            return number

    return TaskPickler


_PICKLER = None


def _plain(message):
    """``message`` pickled by the C pickler alone, or None when cloudpickle could decide otherwise for some part of
    it: plain pickle refuses what only cloudpickle can pickle (lambdas, closures, local classes), and its
    by-reference pickles of ``__main__``'s functions and classes, and of those of modules registered to travel by
    value, are the ones that must not be used (a ``__main__`` reference always leaves its name in the stream)."""
    try:
        from cloudpickle.cloudpickle import _PICKLE_BY_VALUE_MODULES
    except ImportError:
        _PICKLE_BY_VALUE_MODULES = None  # another cloudpickle: its registry cannot be seen
    if _PICKLE_BY_VALUE_MODULES or _PICKLE_BY_VALUE_MODULES is None:
        return None
    try:
        data = pickle.dumps(message, protocol=5)
    except Exception:
        return None
    return None if b"__main__" in data else data


def dumps_task(message, functions):
    """``(bytes, {number: fn})``: ``message`` pickled with its by-value functions as numbers. A message without
    any (every function importable by reference, the common case) is pickled by the C pickler alone, ~7x faster
    than cloudpickle's pickler with its per-object hooks."""
    data = _plain(message)
    if data is not None:
        return data, {}
    global _PICKLER
    if _PICKLER is None:
        _PICKLER = _pickler_class()
    out = io.BytesIO()
    pickler = _PICKLER(out, functions)
    pickler.dump(message)
    return out.getvalue(), pickler.used


class SentFunctions:
    """What one worker's table holds, as the scheduler sees it (kept in step under the worker's send lock)."""

    def __init__(self, limit=WORKER_TABLE_LIMIT):
        self._numbers = collections.OrderedDict()
        self._limit = limit

    def delta(self, used, functions):
        """``(definitions, forget)`` to send with a message that uses ``used``: the bytes of functions the worker
        lacks, and the numbers it should drop to stay within the limit."""
        definitions = {}
        for number, fn in used.items():
            if number in self._numbers:
                self._numbers.move_to_end(number)
            else:
                definitions[number] = functions.blob(fn)
                self._numbers[number] = True
        forget = []
        while len(self._numbers) > self._limit:
            old, _ = self._numbers.popitem(last=False)
            if old in used:  # never forget what this message needs
                self._numbers[old] = True
                break
            forget.append(old)
        return definitions, forget


class FunctionTable:
    """The worker's side: numbers -> functions, loaded from the definitions that came with the messages."""

    def __init__(self):
        self._functions = {}
        table = self._functions

        class Unpickler(pickle.Unpickler):
            def persistent_load(self, number):
                try:
                    return table[number]
                except KeyError:
                    raise pickle.UnpicklingError("function %r was never sent to this worker" % (number,)) from None

        self._unpickler = Unpickler

    def update(self, definitions, forget):
        for number in forget:
            self._functions.pop(number, None)
        for number, blob in definitions.items():
            self._functions[number] = pickle.loads(blob)

    def loads(self, data):
        return self._unpickler(io.BytesIO(data)).load()

    def __len__(self):
        return len(self._functions)
