"""A store started from Python takes its client-table size and object limit from ``max_clients`` and
``max_objects`` (``depot.start()``, ``depot.connect(start=True)``, ``depot.dask.Scheduler``); by default its
client table fits a thousand processes."""

import os
import shutil

import pytest

import depot
from depot._layout import StoreHeaderDescriptor as H
from depot._mapping import open_mapping

DEFAULT_MAX_CLIENTS = 1024


def _limits(directory):
    m = open_mapping(directory)
    return m.max_clients, m.index_slots


def test_default_store_has_a_thousand_client_slots(launcher, fresh_dir):
    with depot.start(fresh_dir, capacity="64m"):
        max_clients, _ = _limits(fresh_dir)
        assert max_clients >= DEFAULT_MAX_CLIENTS


def test_start_passes_max_clients_and_max_objects_to_a_new_store(launcher, fresh_dir):
    with depot.start(fresh_dir, capacity="64m", max_clients=40, max_objects=1000):
        # 1,000 objects need 1,334 slots at the index's 3/4 load limit: the next power of two
        assert _limits(fresh_dir) == (40, 2048)


def test_connect_with_start_passes_the_store_options(launcher, fresh_dir):
    spill = fresh_dir + "-spill"
    try:
        with depot.connect(fresh_dir, start=True, capacity="64m", max_clients=3000, max_objects=100_000,
                           spill_dir=spill) as client:
            assert _limits(fresh_dir) == (3000, 1 << 18)
            m = open_mapping(fresh_dir)
            assert m.u32(H.SPILL_STATE_OFFSET) == H.SPILL_STATE_ON
            assert client.daemon_pid > 0
    finally:
        shutil.rmtree(spill, ignore_errors=True)


def test_scheduler_passes_the_store_options(launcher, fresh_dir):
    pytest.importorskip("dask")
    import depot.dask
    with depot.dask.Scheduler(workers=1, dir=fresh_dir, capacity="64m", max_clients=64, max_objects=5000) as s:
        assert _limits(fresh_dir) == (64, 8192)
        assert len(s.workers) == 1


@pytest.mark.parametrize("options", [{"max_clients": 1}, {"max_clients": 70000}, {"max_clients": "many"},
                                     {"max_objects": 0}, {"max_objects": True}])
def test_bad_limits_are_refused_before_starting(options, fresh_dir):
    with pytest.raises(ValueError, match=next(iter(options))):
        depot.start(fresh_dir, capacity="64m", **options)
    with pytest.raises(ValueError, match=next(iter(options))):
        depot.connect(fresh_dir, start=True, capacity="64m", **options)
    assert not os.path.exists(fresh_dir)


def test_store_options_without_start_are_refused(fresh_dir):
    with pytest.raises(ValueError, match="start=True"):
        depot.connect(fresh_dir, max_clients=10)
