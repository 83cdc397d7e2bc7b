"""One control-protocol connection to the daemon (docs/PROTOCOL.md): the socket, HELLO, frames and replies.

Only a daemon of our own user is spoken to: the peer's uid is read with ``SO_PEERCRED`` before anything is
sent. Not thread-safe by itself: the client serialises requests.
"""

import os
import socket
import struct

from . import _wire as w
from .errors import DaemonNotRunningError, PermissionDeniedError, ProtocolError, VersionMismatchError, from_wire

SOCKET_NAME = "depot.sock"
_PEERCRED = struct.Struct("3i")  # struct ucred: pid, uid, gid
# Replies are read through a buffer of this size: one recv for a whole small reply (header and body), however
# the daemon's write and the kernel split it. Larger frames (LIST) get a buffer of their own.
_READ_BUFFER_LENGTH = 64 << 10


class Welcome:
    """What the daemon said in reply to HELLO."""

    def __init__(self, body):
        if len(body) != w.WELCOME.size:
            raise ProtocolError("HELLO reply of %d bytes, not %d" % (len(body), w.WELCOME.size))
        (self.major, self.minor, self.daemon_pid, self.file_length, self.heap_offset, self.heap_length,
         self.max_body, self.max_metadata, self.max_get_many, _, self.store_device,
         self.store_inode) = w.WELCOME.unpack_from(body)


class Connection:
    def __init__(self, directory):
        self.directory = directory
        self.socket_path = os.path.join(directory, SOCKET_NAME)
        self._next_request = 1
        # interrupted requests whose replies are still to come: request id -> (type, request body)
        self._abandoned = {}
        # set while a frame larger than the read buffer is half read: the stream is then out of step if it stops
        self._in_frame = False
        # bytes received and not yet consumed: [_read_start, _read_end) of _read_buffer
        self._read_buffer = bytearray(_READ_BUFFER_LENGTH)
        self._read_view = memoryview(self._read_buffer)
        self._read_start = 0
        self._read_end = 0
        #: why the connection is unusable, or None
        self.broken = None
        #: the daemon went away (not a protocol error): the client may connect again
        self.lost = False
        #: ids of objects created by interrupted requests: to be aborted before the next request
        self.deferred_aborts = []
        self._sock = self._open()
        try:
            self._check_peer()
            self.welcome = self._hello()
        except BaseException:
            self._sock.close()
            raise

    def _open(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(self.socket_path)
        except (FileNotFoundError, ConnectionRefusedError) as e:
            s.close()
            raise DaemonNotRunningError("no Depot daemon serves %s (%s at %s); start one with `depot serve --dir %s`"
                                        % (self.directory, e.strerror, self.socket_path, self.directory)) from None
        except PermissionError:
            s.close()
            raise PermissionDeniedError("cannot connect to %s: permission denied; the daemon belongs to another user"
                                        % self.socket_path) from None
        except OSError:
            s.close()
            raise
        return s

    def _check_peer(self):
        """Refuses a socket served by another user (who could answer with anything)."""
        pid, uid, _ = _PEERCRED.unpack(self._sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                             _PEERCRED.size))
        if uid != os.geteuid():
            raise PermissionDeniedError("the socket %s is served by process %d of uid %d, not by your own user (uid "
                                        "%d); refusing to talk to it: remove the store directory and start your own"
                                        " daemon" % (self.socket_path, pid, uid, os.geteuid()))

    def _hello(self):
        _, body = self.call(w.HELLO_TYPE, w.HELLO.pack(w.VERSION_MAJOR, w.VERSION_MINOR, os.getpid() & 0xFFFFFFFF))
        if len(body) >= 4:
            major, minor = struct.unpack_from("<HH", body)
            if major != w.VERSION_MAJOR:
                raise VersionMismatchError("the daemon answered HELLO with protocol %d.%d; this client speaks %d.%d"
                                           % (major, minor, w.VERSION_MAJOR, w.VERSION_MINOR))
        return Welcome(body)

    def close(self):
        try:
            self._sock.close()
        except OSError:
            pass

    def call(self, type_, body=b"", many=False):
        """Sends a request and returns (flags, body) of its reply; with ``many`` a list of the bodies of every
        reply frame (FLAG_MORE). An ERROR reply is raised as its exception."""
        if self.broken is not None:
            raise ProtocolError(self.broken)
        while self.deferred_aborts:
            self._exchange(w.ABORT_TYPE, w.ID.pack(self.deferred_aborts.pop()), False)
        return self._exchange(type_, body, many)

    def _exchange(self, type_, body, many):
        request = self._next_request
        self._next_request += 1
        done = False
        sent = False
        try:
            try:
                self._sock.sendall(w.frame(type_, request, body))
            except ConnectionError as e:
                raise self._farewell(e) from None
            sent = True
            bodies = []
            while True:
                rtype, flags, rid, rbody = self._read_frame()
                if rid == 0 and rtype == w.ERROR_TYPE:
                    # about the connection, not a request (refused peer, broken frame): the daemon hangs up
                    self.broken = "the daemon ended the connection"
                    raise self._error(rbody)
                if rid in self._abandoned:
                    self._settle_abandoned(rid, rtype, flags)
                    continue
                if rid != request:
                    self.broken = "reply to request %d arrived while waiting for %d" % (rid, request)
                    raise ProtocolError(self.broken)
                if rtype == w.ERROR_TYPE:
                    done = True
                    raise self._error(rbody)
                if rtype != type_ | w.REPLY_BIT:
                    self.broken = "reply of type %d to a request of type %d" % (rtype, type_)
                    raise ProtocolError(self.broken)
                if not many:
                    done = True
                    return flags, rbody
                bodies.append(rbody)
                if not flags & w.FLAG_MORE:
                    done = True
                    return bodies
        except (ConnectionError, EOFError) as e:
            self.broken = "lost the connection to the Depot daemon at %s: %s" % (self.socket_path, e)
            self.lost = True
            raise ProtocolError(self.broken) from None
        finally:
            if not done and self.broken is None:
                if not sent or self._in_frame:
                    self.broken = ("a request was interrupted in the middle of a frame, so the connection is out of "
                                   "step; close this client and connect again")
                else:
                    # Interrupted between frames (KeyboardInterrupt, say): the reply will still come. It is
                    # skipped then, and whatever it created is given back.
                    self._abandoned[request] = (type_, bytes(body))

    def _farewell(self, cause):
        """The daemon hung up: its last word (an ERROR frame) if it left one, else a ProtocolError."""
        self.broken = "lost the connection to the Depot daemon at %s: %s" % (self.socket_path, cause)
        self.lost = True
        try:
            self._sock.settimeout(1.0)
            rtype, _, _, rbody = self._read_frame()
            if rtype == w.ERROR_TYPE:
                return self._error(rbody)
        except (OSError, EOFError, ProtocolError):
            pass
        return ProtocolError(self.broken)

    @staticmethod
    def _error(body):
        if len(body) < w.ERROR.size:
            return ProtocolError("ERROR reply of %d bytes" % len(body))
        code, length = w.ERROR.unpack_from(body)
        return from_wire(code, bytes(body[w.ERROR.size:w.ERROR.size + length]).decode("utf-8", "replace"))

    def _settle_abandoned(self, rid, rtype, flags):
        """Consumes a reply to an interrupted request, undoing its effect (a writer, a pin)."""
        type_, body = self._abandoned[rid]
        if flags & w.FLAG_MORE:
            return
        del self._abandoned[rid]
        if rtype == w.ERROR_TYPE:
            return
        if type_ == w.CREATE_TYPE:
            self.deferred_aborts.append(body[:w.ID.size])

    def _read_frame(self):
        """The next reply frame: (type, flags, request id, body). A frame that fits the read buffer is consumed
        only once it is all there, so an interruption (Ctrl-C) leaves the stream in step; the body is a copy
        (a bytearray)."""
        if self._read_end - self._read_start < w.HEADER_LENGTH:
            self._fill(w.HEADER_LENGTH)
        start = self._read_start
        length, type_, flags, rid = w.HEADER.unpack_from(self._read_buffer, start)
        if length < w.MIN_LENGTH or length > w.MAX_LENGTH:
            self.broken = "reply frame length %d is outside %d..%d" % (length, w.MIN_LENGTH, w.MAX_LENGTH)
            raise ProtocolError(self.broken)
        total = 4 + length
        if total > len(self._read_buffer):
            return type_, flags, rid, self._read_large_body(length - w.MIN_LENGTH)
        if self._read_end - start < total:
            self._fill(total)
            start = self._read_start  # moved if the buffer was compacted
        body = self._read_buffer[start + w.HEADER_LENGTH:start + total]  # a copy (bytearray)
        self._consume(total)
        return type_, flags, rid, body

    def _fill(self, n):
        """Receives until at least ``n`` (<= the buffer's length) unconsumed bytes are buffered."""
        if self._read_end - self._read_start >= n:
            return
        if self._read_start + n > len(self._read_buffer):
            pending = self._read_end - self._read_start
            # (through a copy: the two ranges may overlap)
            self._read_buffer[:pending] = bytes(self._read_view[self._read_start:self._read_end])
            self._read_start, self._read_end = 0, pending
        while self._read_end - self._read_start < n:
            k = self._sock.recv_into(self._read_view[self._read_end:])
            if k == 0:
                raise EOFError("the daemon closed the connection")
            self._read_end += k

    def _consume(self, n):
        self._read_start += n
        if self._read_start == self._read_end:
            self._read_start = self._read_end = 0

    def _read_large_body(self, n):
        """The body of a frame whose header is buffered but which is larger than the buffer: what is buffered,
        then the rest received straight into the body."""
        self._in_frame = True
        self._consume(w.HEADER_LENGTH)
        body = bytearray(n)
        got = min(n, self._read_end - self._read_start)
        body[:got] = self._read_view[self._read_start:self._read_start + got]
        self._consume(got)
        view = memoryview(body)
        while got < n:
            k = self._sock.recv_into(view[got:])
            if k == 0:
                raise EOFError("the daemon closed the connection")
            got += k
        self._in_frame = False
        return body
