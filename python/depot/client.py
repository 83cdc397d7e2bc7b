"""The Depot client: metadata over the daemon's control socket, data in one shared mapping of the store file."""

import collections
import getpass
import math
import mmap
import os
import socket
import threading
import time

from . import _wire as w
from .errors import (DaemonNotRunningError, ProtocolError, StoreNotFoundError, VersionMismatchError, ViewReleasedError,
                     from_wire)
from .ids import ObjectId, as_id
from .objects import ObjectInfo, ObjectView, ObjectWriter, StoreStats

SOCKET_NAME = "depot.sock"
DIR_ENV_NAME = "DEPOT_DIR"


def default_directory():
    """``$DEPOT_DIR``, else ``/dev/shm/depot-$USER`` (as the Java client)."""
    env = os.environ.get(DIR_ENV_NAME, "").strip()
    if env:
        return env
    return os.path.join("/dev/shm", "depot-" + getpass.getuser())


def connect(dir=None):
    """Connects to the daemon serving the store in ``dir`` (default: ``default_directory()``)."""
    return Client(dir if dir is not None else default_directory())


def _timeout_millis(timeout):
    """Seconds (None: forever; 0: no wait) as the protocol's milliseconds (-1: forever)."""
    if timeout is None:
        return -1
    if timeout < 0:
        raise ValueError("timeout must be None (wait forever), 0 (no wait) or positive seconds, got %r" % (timeout,))
    return 0 if timeout == 0 else max(1, math.ceil(timeout * 1000))


class Client:
    """A connection to a Depot daemon. Maps the store file once; every object's data is a ``memoryview`` slice
    of that mapping, so reads and writes are zero-copy.

    Thread-safe: requests are serialised on the one connection (so a ``get`` that waits holds up the client's
    other threads; give each such thread its own client). Views and writers are for one thread.
    A context manager: ``close()`` at the end releases every pin and aborts every unsealed object.
    """

    def __init__(self, dir):
        self.directory = os.path.abspath(os.fspath(dir))
        self.socket_path = os.path.join(self.directory, SOCKET_NAME)
        self._lock = threading.RLock()
        self._next_request = 1
        self._closed = False
        self._views = set()
        self._writers = set()
        # ids whose pins were handed to arrays that are now garbage: released before the next request
        self._deferred_releases = collections.deque()
        # interrupted requests whose replies are still to come: request id -> (type, request body)
        self._abandoned = {}
        self._in_frame = False
        self._broken = None
        # the daemon went away (not a protocol error): the next request reconnects
        self._lost = False
        # counts reconnections: a pin taken on an earlier connection is not released on a later one
        self._epoch = 0
        self._deferred_aborts = collections.deque()
        self._sock = self._open_socket()
        try:
            self._hello()
            self._map()
        except BaseException:
            self._sock.close()
            raise

    def _open_socket(self):
        if not os.path.isdir(self.directory):
            raise DaemonNotRunningError("there is no Depot store at %s; start a daemon with `depot serve --dir %s`"
                                        % (self.directory, self.directory))
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(self.socket_path)
        except (FileNotFoundError, ConnectionRefusedError) as e:
            s.close()
            raise DaemonNotRunningError("no Depot daemon serves %s (%s at %s); start one with `depot serve --dir %s`"
                                        % (self.directory, e.strerror, self.socket_path, self.directory)) from None
        except OSError:
            s.close()
            raise
        return s

    def _hello(self):
        _, body = self._call(w.HELLO_TYPE, w.HELLO.pack(w.VERSION_MAJOR, w.VERSION_MINOR, os.getpid() & 0xFFFFFFFF))
        if len(body) < w.WELCOME.size:
            raise ProtocolError("HELLO reply of %d bytes is shorter than %d" % (len(body), w.WELCOME.size))
        (major, minor, self.daemon_pid, self.file_length, self.heap_offset, self.heap_length, self.max_body,
         self.max_metadata, self.max_get_many, path_length) = w.WELCOME.unpack_from(body)
        if major != w.VERSION_MAJOR:
            raise VersionMismatchError("the daemon answered HELLO with protocol %d.%d; this client speaks %d.%d"
                                       % (major, minor, w.VERSION_MAJOR, w.VERSION_MINOR))
        if w.WELCOME.size + path_length != len(body):
            raise ProtocolError("HELLO reply says the path has %d bytes but %d follow"
                                % (path_length, len(body) - w.WELCOME.size))
        self.protocol_version = (major, minor)
        self.store_file = bytes(body[w.WELCOME.size:]).decode("utf-8")

    def _map(self):
        try:
            fd = os.open(self.store_file, os.O_RDWR)
        except FileNotFoundError:
            raise StoreNotFoundError("the daemon named the store file %s but it does not exist" % self.store_file)
        try:
            st = os.fstat(fd)
            self._store_ino = st.st_ino
            actual = st.st_size
            if actual != self.file_length:
                raise ProtocolError("the store file %s has %d bytes but the daemon says %d"
                                    % (self.store_file, actual, self.file_length))
            self._mmap = mmap.mmap(fd, self.file_length, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ | mmap.PROT_WRITE)
        finally:
            os.close(fd)
        self._memory = memoryview(self._mmap)

    # ---- wire -------------------------------------------------------------------------------------------

    def _call(self, type_, body=b"", many=False):
        """Sends a request and returns (flags, body) of its reply; with ``many`` a list of the bodies of every
        reply frame (FLAG_MORE). An ERROR reply is raised as its exception."""
        with self._lock:
            if self._closed:
                raise ViewReleasedError("this Depot client is closed")
            if self._broken is not None:
                if not self._lost:
                    raise ProtocolError(self._broken)
                self._reconnect()
            self._flush_deferred_releases()
            return self._exchange(type_, body, many)

    def _reconnect(self):
        """After the daemon went away: connect to the daemon now serving the directory and carry on with the
        same mapping (the store file outlives daemons). What the old connection held is gone: its views are no
        longer pinned and its unsealed objects were aborted by the new daemon."""
        cause = self._broken
        try:
            self._sock.close()
        except OSError:
            pass
        try:
            self._sock = self._open_socket()
        except DaemonNotRunningError as e:
            raise ProtocolError("%s; reconnecting failed: %s" % (cause, e)) from None
        self._broken = None
        self._lost = False
        self._abandoned.clear()
        self._in_frame = False
        self._deferred_releases.clear()
        self._deferred_aborts.clear()
        self._epoch += 1
        self._views.clear()
        self._writers.clear()
        mapped = (self.store_file, self.file_length)
        self._hello()
        if (self.store_file, self.file_length) != mapped or os.stat(self.store_file).st_ino != self._store_ino:
            self._broken = ("the store at %s was recreated while this client was disconnected; connect again"
                            % self.directory)
            raise ProtocolError(self._broken)

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
                    self._broken = "the daemon ended the connection"
                    raise self._error(rbody)
                if rid in self._abandoned:
                    self._settle_abandoned(rid, rtype, flags, rbody)
                    continue
                if rid != request:
                    self._broken = "reply to request %d arrived while waiting for %d" % (rid, request)
                    raise ProtocolError(self._broken)
                if rtype == w.ERROR_TYPE:
                    done = True
                    raise self._error(rbody)
                if rtype != type_ | w.REPLY_BIT:
                    self._broken = "reply of type %d to a request of type %d" % (rtype, type_)
                    raise ProtocolError(self._broken)
                if not many:
                    done = True
                    return flags, rbody
                bodies.append(rbody)
                if not flags & w.FLAG_MORE:
                    done = True
                    return bodies
        except (ConnectionError, EOFError) as e:
            self._broken = "lost the connection to the Depot daemon at %s: %s" % (self.socket_path, e)
            self._lost = True
            raise ProtocolError(self._broken) from None
        finally:
            if not done and self._broken is None:
                if not sent or self._in_frame:
                    self._broken = ("a request was interrupted in the middle of a frame, so the connection is out of "
                                    "step; close this client and connect again")
                else:
                    # Interrupted between frames (KeyboardInterrupt in a long get, say): the reply will still
                    # come. It is skipped then, and whatever it pinned or created is given back.
                    self._abandoned[request] = (type_, bytes(body))

    def _farewell(self, cause):
        """The daemon hung up: its last word (an ERROR frame) if it left one, else a ProtocolError."""
        self._broken = "lost the connection to the Depot daemon at %s: %s" % (self.socket_path, cause)
        self._lost = True
        try:
            self._sock.settimeout(1.0)
            rtype, _, _, rbody = self._read_frame()
            if rtype == w.ERROR_TYPE:
                return self._error(rbody)
        except (OSError, EOFError, ProtocolError):
            pass
        return ProtocolError(self._broken)

    def _error(self, body):
        if len(body) < w.ERROR.size:
            return ProtocolError("ERROR reply of %d bytes" % len(body))
        code, length = w.ERROR.unpack_from(body)
        return from_wire(code, bytes(body[w.ERROR.size:w.ERROR.size + length]).decode("utf-8", "replace"))

    def _settle_abandoned(self, rid, rtype, flags, rbody):
        """Consumes a reply to an interrupted request, undoing its effect (a pin, a writer)."""
        type_, body = self._abandoned[rid]
        if flags & w.FLAG_MORE:
            return
        del self._abandoned[rid]
        if rtype == w.ERROR_TYPE:
            return
        if type_ == w.GET_TYPE:
            self._deferred_releases.append(body[:w.ID.size])
        elif type_ == w.GET_MANY_TYPE:
            count, _ = w.COUNT.unpack_from(rbody)
            for i in range(count):
                if w.LOCATION.unpack_from(rbody, w.COUNT.size + i * w.LOCATION.size)[4]:
                    at = w.GET_MANY.size + i * w.ID.size
                    self._deferred_releases.append(body[at:at + w.ID.size])
        elif type_ == w.CREATE_TYPE:
            self._deferred_aborts.append(body[:w.ID.size])

    def _read_frame(self):
        head = self._read_exactly(w.HEADER_LENGTH)
        length, type_, flags, rid = w.HEADER.unpack(head)
        if length < w.MIN_LENGTH or length > w.MAX_LENGTH:
            self._broken = "reply frame length %d is outside %d..%d" % (length, w.MIN_LENGTH, w.MAX_LENGTH)
            raise ProtocolError(self._broken)
        self._in_frame = True
        body = self._read_exactly(length - w.MIN_LENGTH)
        self._in_frame = False
        return type_, flags, rid, memoryview(body)

    def _read_exactly(self, n):
        buf = bytearray(n)
        view = memoryview(buf)
        got = 0
        while got < n:
            k = self._sock.recv_into(view[got:])
            if k == 0:
                raise EOFError("the daemon closed the connection")
            got += k
            self._in_frame = got < n or self._in_frame
        return buf

    def _flush_deferred_releases(self):
        while self._deferred_releases:
            raw = self._deferred_releases.popleft()
            self._exchange(w.RELEASE_TYPE, w.ID.pack(raw), False)
        while self._deferred_aborts:
            raw = self._deferred_aborts.popleft()
            self._exchange(w.ABORT_TYPE, w.ID.pack(raw), False)

    def _location(self, body, at=0):
        data_offset, size, meta_offset, meta_length, found = w.LOCATION.unpack_from(body, at)
        if not found:
            return None
        for what, start, length in (("data", data_offset, size), ("metadata", meta_offset, meta_length)):
            if start < self.heap_offset or start + length > self.file_length:
                raise ProtocolError("object %s at %d..%d lies outside the heap %d..%d"
                                    % (what, start, start + length, self.heap_offset, self.file_length))
        return data_offset, size, meta_offset, meta_length

    # ---- API --------------------------------------------------------------------------------------------

    def create(self, oid, size, metadata=b"", evict=True):
        """Creates an object of ``size`` bytes: returns an ``ObjectWriter`` whose ``data`` is writable shared
        memory. When the store is full, least-recently-used unpinned objects are evicted first unless
        ``evict=False``. Raises ObjectExistsError, StoreFullError."""
        oid = as_id(oid)
        metadata = bytes(metadata)
        if size < 0:
            raise ValueError("size must be >= 0, got %d" % size)
        if len(metadata) > self.max_metadata:
            raise ValueError("metadata of %d bytes exceeds the limit of %d" % (len(metadata), self.max_metadata))
        flags = 0 if evict else w.CREATE_FLAG_NO_EVICT
        _, body = self._call(w.CREATE_TYPE, w.CREATE.pack(bytes(oid), flags, size, len(metadata)) + metadata)
        offset, got = w.CREATED.unpack_from(body)
        if got != size or offset < self.heap_offset or offset + size > self.file_length:
            raise ProtocolError("CREATE reply puts %d bytes at %d, outside the heap or not the %d asked"
                                % (got, offset, size))
        writer = ObjectWriter(self, oid, offset, size, self._memory[offset:offset + size])
        self._writers.add(writer)
        return writer

    def put(self, oid, data, metadata=b"", evict=True):
        """Creates, fills and seals an object with a copy of ``data`` (any C-contiguous buffer)."""
        src = memoryview(data)
        if not src.c_contiguous:
            raise ValueError("put needs a C-contiguous buffer")
        src = src.cast("B") if src.format != "B" or src.ndim != 1 else src
        with self.create(oid, src.nbytes, metadata, evict) as writer:
            writer.data[:] = src
            writer.seal()

    def get(self, oid, timeout=None):
        """Gets a sealed object, waiting up to ``timeout`` seconds for it (None: wait forever; 0: do not wait).
        Returns an ``ObjectView`` pinned until released. Raises ObjectMissingError."""
        oid = as_id(oid)
        _, body = self._call(w.GET_TYPE, w.GET.pack(bytes(oid), 0, _timeout_millis(timeout)))
        return self._view(oid, self._location(body))

    def get_many(self, oids, timeout=None):
        """Gets several objects, waiting up to ``timeout`` seconds in total. Returns one entry per id, in
        order: an ``ObjectView``, or None for an object still missing at the end."""
        oids = [as_id(o) for o in oids]
        millis = _timeout_millis(timeout)
        deadline = time.monotonic() + millis / 1000.0
        out = []
        for start in range(0, len(oids), self.max_get_many):
            chunk = oids[start:start + self.max_get_many]
            if millis > 0 and start > 0:
                millis = max(0, math.ceil((deadline - time.monotonic()) * 1000))
            request = w.GET_MANY.pack(millis, len(chunk), 0) + b"".join(bytes(o) for o in chunk)
            _, body = self._call(w.GET_MANY_TYPE, request)
            count, _ = w.COUNT.unpack_from(body)
            if count != len(chunk) or len(body) != w.COUNT.size + count * w.LOCATION.size:
                raise ProtocolError("GET_MANY reply has %d entries for %d ids" % (count, len(chunk)))
            for i, oid in enumerate(chunk):
                loc = self._location(body, w.COUNT.size + i * w.LOCATION.size)
                out.append(None if loc is None else self._view(oid, loc))
        return out

    def _view(self, oid, location):
        data_offset, size, meta_offset, meta_length = location
        metadata = bytes(self._memory[meta_offset:meta_offset + meta_length])
        view = ObjectView(self, oid, data_offset, size, metadata,
                          self._memory[data_offset:data_offset + size].toreadonly())
        self._views.add(view)
        return view

    def contains(self, oid):
        """True when a sealed object with this id exists."""
        _, body = self._call(w.CONTAINS_TYPE, w.ID.pack(bytes(as_id(oid))))
        return w.BOOLEAN.unpack_from(body)[0] == 1

    def delete(self, oid):
        """Deletes a sealed object (deferred while pinned). False when there is none with this id."""
        _, body = self._call(w.DELETE_TYPE, w.ID.pack(bytes(as_id(oid))))
        return w.BOOLEAN.unpack_from(body)[0] == 1

    def list(self):
        """Every object in the store, as ``ObjectInfo``."""
        out = []
        for body in self._call(w.LIST_TYPE, b"", many=True):
            count, _ = w.COUNT.unpack_from(body)
            if len(body) != w.COUNT.size + count * w.ENTRY.size:
                raise ProtocolError("LIST reply of %d bytes for %d entries" % (len(body), count))
            for i in range(count):
                raw, state, meta, pins, size, created, access = w.ENTRY.unpack_from(body, w.COUNT.size + i * w.ENTRY.size)
                state_name = w.STATES[state] if state < len(w.STATES) else "unknown(%d)" % state
                out.append(ObjectInfo(ObjectId(raw), state_name, size, meta, pins, created / 1000.0, access / 1000.0))
        return out

    def stat(self):
        """Figures of the store, as ``StoreStats``."""
        _, body = self._call(w.STAT_TYPE)
        return StoreStats(*w.STAT.unpack_from(body))

    def evict(self, nbytes):
        """Evicts least-recently-used unpinned objects until ``nbytes`` are freed; returns the bytes freed."""
        if nbytes < 0:
            raise ValueError("nbytes must be >= 0, got %d" % nbytes)
        _, body = self._call(w.EVICT_TYPE, w.EVICT.pack(nbytes))
        return w.EVICT.unpack_from(body)[0]

    def put_array(self, oid, array, metadata=b"", evict=True):
        """Stores a NumPy array: its elements in C order, its dtype and shape in the metadata (see arrays)."""
        from .arrays import put_array
        put_array(self, oid, array, metadata, evict)

    def get_array(self, oid, timeout=None):
        """A read-only NumPy array over the object's shared memory (no copy). The pin is held for as long as the
        array (or any array made from it) is alive."""
        from .arrays import get_array
        return get_array(self, oid, timeout)

    def put_object(self, oid, obj, metadata=b"", evict=True):
        """Stores any picklable object (pickle protocol 5); its large buffers go straight into shared memory
        (see depot.pickling)."""
        from .pickling import put_object
        put_object(self, oid, obj, metadata, evict)

    def get_object(self, oid, timeout=None):
        """The object put_object stored, its large buffers read-only views of shared memory (no copy), pinned
        until the last of them is collected (see depot.pickling)."""
        from .pickling import get_object
        return get_object(self, oid, timeout)

    # ---- called by views and writers --------------------------------------------------------------------

    def _seal(self, oid):
        self._call(w.SEAL_TYPE, w.ID.pack(bytes(oid)))

    def _abort(self, oid, writer=None):
        if writer is not None and writer not in self._writers:
            return  # created on a connection that is gone: the daemon already aborted it
        if not self._closed:
            self._call(w.ABORT_TYPE, w.ID.pack(bytes(oid)))

    def _writer_done(self, writer):
        self._writers.discard(writer)

    def _release(self, view):
        if view not in self._views:
            return  # pinned on a connection that is gone: the daemon already dropped the pin
        self._views.discard(view)
        if not self._closed:
            self._call(w.RELEASE_TYPE, w.ID.pack(bytes(view.id)))

    def _defer_release(self, raw_id, epoch=None):
        """From a finaliser (any thread, any time): queue the release for the next request, unless the pin was
        taken on a connection that is gone (``epoch`` older than the current one)."""
        if not self._closed and (epoch is None or epoch == self._epoch):
            self._deferred_releases.append(raw_id)

    def flush(self):
        """Sends the releases of arrays that were garbage-collected (done before every request anyway)."""
        self._call(w.STAT_TYPE)

    # ---- lifecycle --------------------------------------------------------------------------------------

    @property
    def closed(self):
        return self._closed

    def close(self):
        """Closes the connection: the daemon releases every pin and aborts every unsealed object of this client.
        Views and writers become unusable. The mapping is unmapped once no array made from it is alive."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            for view in list(self._views):
                view.release()
            for writer in list(self._writers):
                writer.abort()
            self._sock.close()
            self._memory.release()
            try:
                self._mmap.close()
            except BufferError:
                pass  # arrays from get_array still use the mapping; it goes when they do

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "Client(%r%s)" % (self.directory, ", closed" if self._closed else "")
