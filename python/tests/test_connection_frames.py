"""Reading reply frames through the connection's buffer, against a socket pair standing in for the daemon."""

import socket
import threading

import pytest

from depot import _connection
from depot import _wire as w
from depot.errors import ProtocolError


@pytest.fixture
def pair(monkeypatch):
    """(a Connection, the other end of its socket): a socket pair stands in for the daemon, which answers HELLO."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    monkeypatch.setattr(_connection.Connection, "_open", lambda self: ours)
    theirs.sendall(reply(w.HELLO_TYPE, 1, w.WELCOME.pack(w.VERSION_MAJOR, w.VERSION_MINOR, 1, 1 << 20, 4096,
                                                          (1 << 20) - 4096, w.MAX_BODY_LENGTH, 65536, 4096, 0, 1, 2)))
    conn = _connection.Connection("(socket pair)")
    hello = theirs.recv(4096)
    assert w.HEADER.unpack_from(hello)[1] == w.HELLO_TYPE
    yield conn, theirs
    ours.close()
    theirs.close()


def reply(type_, rid, body, flags=0):
    return w.HEADER.pack(w.MIN_LENGTH + len(body), type_ | w.REPLY_BIT, flags, rid) + body


def test_frames_that_arrive_a_byte_at_a_time_are_read_whole(pair):
    conn, daemon = pair
    data = reply(w.PUT_TYPE, 1, w.CREATED.pack(4096, 1024)) + reply(w.STAT_TYPE, 2, bytes(range(128)))

    def trickle():
        for i in range(len(data)):
            daemon.sendall(data[i:i + 1])

    t = threading.Thread(target=trickle)
    t.start()
    assert conn._read_frame() == (w.PUT_TYPE | w.REPLY_BIT, 0, 1, bytearray(w.CREATED.pack(4096, 1024)))
    assert conn._read_frame() == (w.STAT_TYPE | w.REPLY_BIT, 0, 2, bytearray(range(128)))
    t.join()
    assert conn._read_start == conn._read_end == 0


def test_several_replies_received_at_once_are_read_one_by_one(pair):
    conn, daemon = pair
    daemon.sendall(b"".join(reply(w.DELETE_TYPE, rid, w.BOOLEAN.pack(rid % 2)) for rid in range(1, 101)))
    for rid in range(1, 101):
        type_, _, got, body = conn._read_frame()
        assert (type_, got, w.BOOLEAN.unpack(body)[0]) == (w.DELETE_TYPE | w.REPLY_BIT, rid, rid % 2)


def test_a_frame_straddling_the_end_of_the_buffer_is_read_whole(pair):
    conn, daemon = pair
    # first a frame that leaves 10 bytes of room at the end of the buffer, then one that does not fit there
    first = reply(w.LIST_TYPE, 1, bytes(_connection._READ_BUFFER_LENGTH - w.HEADER_LENGTH - 10))
    second = reply(w.STAT_TYPE, 2, b"\x07" * 128)
    threading.Thread(target=daemon.sendall, args=(first + second,)).start()
    assert len(conn._read_frame()[3]) == _connection._READ_BUFFER_LENGTH - w.HEADER_LENGTH - 10
    assert conn._read_frame() == (w.STAT_TYPE | w.REPLY_BIT, 0, 2, bytearray(b"\x07" * 128))


def test_a_frame_larger_than_the_buffer_is_read_into_its_own(pair):
    conn, daemon = pair
    big = bytes(i % 251 for i in range(3 * _connection._READ_BUFFER_LENGTH + 5))
    data = reply(w.LIST_TYPE, 1, big, w.FLAG_MORE) + reply(w.LIST_TYPE, 1, b"end")
    threading.Thread(target=daemon.sendall, args=(data,)).start()
    assert conn._read_frame() == (w.LIST_TYPE | w.REPLY_BIT, w.FLAG_MORE, 1, bytearray(big))
    assert not conn._in_frame
    assert conn._read_frame()[3] == b"end"


def test_a_length_out_of_bounds_breaks_the_connection(pair):
    conn, daemon = pair
    daemon.sendall(w.HEADER.pack(w.MAX_LENGTH + 1, w.PUT_TYPE | w.REPLY_BIT, 0, 1))
    with pytest.raises(ProtocolError, match="outside"):
        conn._read_frame()
    assert conn.broken is not None


def test_the_daemon_hanging_up_in_a_frame_is_end_of_file(pair):
    conn, daemon = pair
    daemon.sendall(reply(w.STAT_TYPE, 1, bytes(128))[:50])
    daemon.shutdown(socket.SHUT_WR)
    with pytest.raises(EOFError):
        conn._read_frame()
