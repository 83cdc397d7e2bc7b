"""The messages between depot.dask's pool and its workers (``_transport``): each kind is its own type and comes
back as sent; a batch's frame names its batch even when the rest cannot be read; a worker started for another
protocol version says so and stops."""

import multiprocessing.connection
import pickle
import socket

import pytest

pytest.importorskip("dask")

from depot.dask import _transport, _worker  # noqa: E402
from depot.dask._transport import (PROTOCOL_VERSION, Drop, DropPrefix, Failed, Publish, Ready, Results,  # noqa: E402
                                   RunBatch, Stop, Unqueue, Unqueued, Unreadable)

EVERY_KIND = [RunBatch(7, {1: b"fn"}, [2], b"body", [b"old"], None), Publish([b"a" * 20]), Drop([b"b" * 20]),
              DropPrefix(b"p" * 12), Unqueue(7), Stop(), Ready(1234, PROTOCOL_VERSION), Failed("traceback"),
              Results(7, [("k", ("inline", 1234), False)], {"k": 0.5}), Unqueued(7), Unreadable(7, "traceback")]


def test_every_message_kind_comes_back_as_its_own_type_with_its_fields():
    for message in EVERY_KIND:
        back = _transport.decode(_transport.encode(message))
        assert type(back) is type(message) and back == message
    assert len({type(m) for m in EVERY_KIND}) == len(EVERY_KIND)


def test_a_batch_frame_names_its_batch_even_when_its_pickle_cannot_be_read():
    frame = _transport.encode(RunBatch(2 ** 40 + 3, {}, [], b"", [], b"then"))
    assert _transport.batch_id_of(frame) == 2 ** 40 + 3
    assert _transport.batch_id_of(b"garbage" + frame[-8:]) == 2 ** 40 + 3
    with pytest.raises(ValueError, match="frame of 3 bytes is shorter than its 8-byte batch id"):
        _transport.batch_id_of(b"abc")
    # the batch id behind the pickle does not disturb reading it
    assert pickle.loads(frame) == RunBatch(2 ** 40 + 3, {}, [], b"", [], b"then")


def test_a_worker_started_for_another_protocol_version_fails_naming_both_versions():
    ours, theirs = socket.socketpair()
    conn = multiprocessing.connection.Connection(ours.detach())
    worker_end = multiprocessing.connection.Connection(theirs.detach())
    try:
        _worker.main(worker_end, "/nonexistent", 1 << 16, PROTOCOL_VERSION + 1)
        answer = _transport.decode(conn.recv_bytes())
        assert type(answer) is Failed
        assert "version %d" % PROTOCOL_VERSION in answer.text and "%d" % (PROTOCOL_VERSION + 1) in answer.text
    finally:
        conn.close()
        worker_end.close()
    assert _transport.version_mismatch(PROTOCOL_VERSION) is None
