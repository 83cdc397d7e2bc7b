"""depot.dask's by-value functions (lambdas, closures, functions of __main__): pickled once per compute and
worker, referred to by number afterwards; each compute takes a new snapshot; the worker's table stays bounded."""

import pickle

from dask_fixtures import clean_store, dask_daemon, scheduler  # noqa: F401

import dask  # noqa: E402

from depot.dask._functions import ComputeFunctions, FunctionTable, SentFunctions, dumps_task  # noqa: E402


def _closure(value):
    return lambda x: x + value


def test_a_by_value_function_is_sent_once_per_worker_and_then_by_number():
    compute, sent, table = ComputeFunctions(), SentFunctions(), FunctionTable()
    fn = _closure(10)
    first, used = dumps_task((fn, 1), compute)
    definitions, forget = sent.delta(used, compute)
    assert list(definitions) == list(used) and forget == []
    table.update(definitions, forget)
    again, used_again = dumps_task((fn, 2), compute)
    assert used_again.keys() == used.keys()
    assert sent.delta(used_again, compute) == ({}, [])
    got_fn, arg = table.loads(again)
    assert got_fn(arg) == 12
    assert len(again) < len(pickle.dumps(definitions[next(iter(definitions))]))


def test_functions_importable_by_reference_travel_as_before():
    compute = ComputeFunctions()
    body, used = dumps_task((len, dict.fromkeys, FunctionTable), compute)
    assert used == {}
    assert FunctionTable().loads(body) == (len, dict.fromkeys, FunctionTable)


def test_each_compute_numbers_its_functions_afresh():
    fn = _closure(1)
    _, first = dumps_task(fn, ComputeFunctions())
    _, second = dumps_task(fn, ComputeFunctions())
    assert first.keys() != second.keys()


def test_the_workers_table_forgets_the_oldest_beyond_its_limit():
    compute, sent, table = ComputeFunctions(), SentFunctions(limit=2), FunctionTable()
    bodies = []
    for value in range(3):
        body, used = dumps_task(_closure(value), compute)
        table.update(*sent.delta(used, compute))
        bodies.append(body)
    assert len(table) == 2
    assert table.loads(bodies[2])(0) == 2


def test_a_lambda_in_many_tasks_and_a_closure_that_changes_between_computes(scheduler, clean_store):
    state = {"offset": 1}

    def shifted(i):
        return i + state["offset"]

    tasks = [dask.delayed(shifted)(i) for i in range(40)]
    assert dask.compute(*tasks, scheduler=scheduler) == tuple(i + 1 for i in range(40))
    state["offset"] = 100  # a new compute pickles the function (and what it refers to) again
    assert dask.compute(*tasks, scheduler=scheduler) == tuple(i + 100 for i in range(40))


def test_a_standard_batch_travels_without_the_hooks_and_gets_them_back():
    from dask.local import batch_execute_tasks
    from depot.dask import _worker
    hooks = _worker.task_hooks()
    args = [("k1", "task1") + hooks, ("k2", "task2") + hooks]
    fn, small = _worker.compact(batch_execute_tasks, args)
    assert fn is None and small == [("k1", "task1"), ("k2", "task2")]
    assert _worker.expand(fn, small) == (batch_execute_tasks, args)
    other = [("k1", "task1", len, len, len, len)]
    assert _worker.compact(batch_execute_tasks, other) == (batch_execute_tasks, other)
    assert _worker.compact(len, args) == (len, args)


def _main_function(x):
    return x * 3


def test_a_function_of_main_travels_by_value_although_plain_pickle_takes_it_by_reference(monkeypatch):
    import sys
    monkeypatch.setattr(_main_function, "__module__", "__main__")
    monkeypatch.setattr(sys.modules["__main__"], "_main_function", _main_function, raising=False)
    pickle.dumps(_main_function)  # the C pickler alone would send "__main__._main_function", unknown to a worker
    compute, sent, table = ComputeFunctions(), SentFunctions(), FunctionTable()
    body, used = dumps_task((_main_function, 2), compute)
    assert list(used.values()) == [_main_function]
    table.update(*sent.delta(used, compute))
    fn, arg = table.loads(body)
    assert fn(arg) == 6


def test_a_message_of_plain_data_and_importable_functions_is_what_plain_pickle_makes():
    message = ((len, [1, 2.5, "x"], {"k": (None, b"b")}), {"key": bytes(20)})
    body, used = dumps_task(message, ComputeFunctions())
    assert used == {} and body == pickle.dumps(message, protocol=5)
    assert FunctionTable().loads(body) == message
