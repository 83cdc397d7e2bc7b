"""The Depot client: gets and writes straight in shared memory, the rest through the daemon's socket.

``get``, ``get_many``, ``contains``, ``get_array`` and releasing never talk to the daemon: the client has a
slot of its own in the store's client table and pins objects there (``_index``, ``_pins``). Creating,
sealing, aborting and deleting do not either in the common case (``_local_writes``): only a create that needs
room made (eviction, waiting, spilling) or meets a busy allocator lock, and the delete of a spilled object or
one being evicted, go to the daemon. Listing, statistics and eviction are requests on the control socket
(``_connection``). The store file is mapped once per process (``_mapping``).
"""

import os
import threading
import weakref

from . import _atomics as atomics
from . import _process
from . import _wire as w
from ._checks import MAX_SIZE, check_size, deadline_of, describe_timeout, timeout_millis
from ._connection import SOCKET_NAME, Connection
from ._directory import default_directory
from ._index import IndexReader
from ._layout import StoreHeaderDescriptor as H
from ._local_writes import LocalWrites
from ._mapping import STORE_FILE_NAME, check_directory, open_mapping
from ._pins import ClientSlot
from .daemon import connect_or_start
from .errors import (ArgumentTypeError, BadRequestError, ClientClosedError, DaemonNotRunningError,
                     ObjectMissingError, ProtocolError, StoreNotFoundError, ViewReleasedError)
from .ids import ObjectId, as_id
from .objects import ObjectInfo, ObjectView, ObjectWriter, StoreStats

_clients = weakref.WeakSet()


def connect(dir=None, start=False, capacity=None, detach=False, spill_dir=None, max_clients=None, max_objects=None):
    """Connects to the daemon serving the store in ``dir`` (default: ``default_directory()``). With
    ``start=True``, when none serves, starts one (stopped when this process exits, unless ``detach``; see
    depot.daemon) with a new store of ``capacity`` (default "1g") if there is none; ``spill_dir``,
    ``max_clients`` and ``max_objects`` go to that daemon as ``depot.start()`` takes them."""
    directory = dir if dir is not None else default_directory()
    if start:
        return connect_or_start(Client, directory, capacity, detach, spill_dir, max_clients, max_objects)
    if spill_dir is not None or max_clients is not None or max_objects is not None:
        raise ValueError("spill_dir, max_clients and max_objects shape a daemon this call starts: pass start=True")
    return Client(directory)


def _raw_id(oid):
    if type(oid) is ObjectId:
        return oid._bytes
    return bytes(as_id(oid))


class Client:
    """A client of one store: its own slot in the store's client table, and a connection to its daemon.

    Thread-safe: gets run concurrently in any number of threads (a waiting get blocks only its thread);
    requests to the daemon are serialised on the one connection. After ``os.fork()`` the child's first use
    connects again with a slot of its own; what the parent pinned stays the parent's.
    A context manager: ``close()`` releases every pin and aborts every unsealed object.
    """

    def __init__(self, dir):
        self.directory = os.path.abspath(os.fspath(dir))
        self.socket_path = os.path.join(self.directory, SOCKET_NAME)
        self.store_file = os.path.join(self.directory, STORE_FILE_NAME)
        self._lock = threading.RLock()
        self._closed = False
        # the views handed out, by pin position (each position holds at most one pin at a time, so an entry is
        # replaced when its position is reused): weak references, released by close()
        self._views = {}
        self._writers = set()
        self._subscriptions = weakref.WeakSet()
        # counts connections (reconnects, forks): a writer of an earlier one cannot be sealed on a later one
        self._epoch = 0
        self._mapping = None
        self._slot = None
        self._reader = None
        self._writes = None
        # local creates whose abort a finaliser asked for: done by the next write or close (a finaliser may run
        # while this thread holds the allocator lock, so it must not take it)
        self._deferred_local_aborts = []
        self._conn = None
        self._connect()
        _clients.add(self)

    def _connect(self):
        try:
            check_directory(self.directory)
        except StoreNotFoundError as e:
            raise DaemonNotRunningError(str(e)) from None
        conn = Connection(self.directory)
        try:
            mapping = open_mapping(self.directory)
            self._check_same_file(conn, mapping)
            slot = ClientSlot(mapping)
        except BaseException:
            conn.close()
            raise
        self._conn = conn
        self._mapping = mapping
        self._slot = slot
        self._reader = IndexReader(mapping, slot)
        self._writes = LocalWrites(mapping, slot, self._reader)
        slot.finish_pending_delete = self._writes.finish_pending_delete
        self._fork_generation = _process.fork_generation()
        welcome = conn.welcome
        self.protocol_version = (welcome.major, welcome.minor)
        self.daemon_pid = welcome.daemon_pid
        self.file_length = mapping.file_length
        self.heap_offset = mapping.heap_offset
        self.heap_length = mapping.heap_length
        self.max_metadata = welcome.max_metadata
        self.max_get_many = welcome.max_get_many

    @staticmethod
    def _check_same_file(conn, mapping):
        welcome = conn.welcome
        if (welcome.store_device, welcome.store_inode) != (mapping.device, mapping.inode):
            raise ProtocolError("the daemon at %s serves the file with (device, inode) (%d, %d) but %s is (%d, %d): the"
                                " store was replaced; connect again" % (conn.socket_path, welcome.store_device,
                                                                         welcome.store_inode, mapping.path,
                                                                         mapping.device, mapping.inode))
        if welcome.file_length != mapping.file_length:
            raise ProtocolError("the daemon says the store file has %d bytes but %s has %d"
                                % (welcome.file_length, mapping.path, mapping.file_length))

    # ---- state checks ---------------------------------------------------------------------------------

    def _reader_for_get(self):
        """The index reader, after making sure this client may be used in this process."""
        if self._closed:
            raise ClientClosedError("this Depot client of %s is closed; connect again" % self.directory)
        if self._fork_generation != _process._fork_generation:
            self._after_fork()
        return self._reader

    def _after_fork(self):
        """First use in a forked child: a connection and a slot of our own. The parent's pins, views and
        writers stay the parent's: the child never releases or aborts them."""
        with self._lock:
            if self._fork_generation == _process.fork_generation():
                return
            self._conn.close()  # our copy of the parent's socket: the parent's connection carries on
            self._views = {}
            self._writers = set()
            self._deferred_local_aborts = []
            self._epoch += 1
            self._connect()

    def _call(self, type_, body=b"", many=False):
        with self._lock:
            self._reader_for_get()
            if self._deferred_local_aborts:
                self._abort_deferred_locally()
            conn = self._conn
            if conn.broken is not None and conn.lost:
                self._reconnect(conn.broken)
            return self._conn.call(type_, body, many)

    def _reconnect(self, cause):
        """After the daemon went away: connect to the daemon now serving the directory and carry on with the
        same mapping and slot (the store file outlives daemons, and so do our pins). Unsealed objects of the
        old connection were aborted by the new daemon."""
        try:
            conn = Connection(self.directory)
        except DaemonNotRunningError as e:
            raise ProtocolError("%s; reconnecting failed: %s" % (cause, e)) from None
        try:
            self._check_same_file(conn, self._mapping)
        except ProtocolError as e:
            conn.close()
            raise ProtocolError("the store at %s was recreated while this client was disconnected; connect again (%s)"
                                % (self.directory, e)) from None
        self._conn.close()
        self._conn = conn
        # Writers the daemon made are gone with it; those made in shared memory are our slot's and carry on.
        self._writers = {wr for wr in self._writers if wr._local is not None}
        self._epoch += 1
        self.daemon_pid = conn.welcome.daemon_pid

    # ---- writes (through the daemon) -------------------------------------------------------------------

    def create(self, oid, size, metadata=b"", evict=True, keep=False, timeout=0):
        """Creates an object of ``size`` bytes: returns an ``ObjectWriter`` whose ``data`` is writable shared
        memory. When the store is full, least-recently-used unpinned objects are evicted first unless
        ``evict=False``. With ``keep=True`` the object is never evicted (a daemon with a spill directory
        spills it to disk instead, and a get restores it). When there is no room, waits up to ``timeout``
        seconds (None: no limit; 0, the default: not at all) for room. Raises ObjectExistsError,
        StoreFullError."""
        raw = _raw_id(oid)
        size = check_size(size, "object size", MAX_SIZE)
        metadata = self._metadata(metadata)
        created = self._try_create_locally(raw, size, metadata, keep)
        if created is not None:
            writer = ObjectWriter(self, ObjectId(raw), created.data_offset, size,
                                  self._mapping.span(created.data_offset, size, self._mapping, readonly=False),
                                  self._epoch, created)
            self._writers.add(writer)
            return writer
        flags = (0 if evict else w.CREATE_FLAG_NO_EVICT) | (w.CREATE_FLAG_KEEP if keep else 0)
        tail = b""
        if timeout != 0:
            flags |= w.CREATE_FLAG_TIMEOUT
            tail = w.CREATE_TIMEOUT.pack(timeout_millis(timeout))
        _, body = self._call(w.CREATE_TYPE, w.CREATE.pack(raw, flags, size, len(metadata)) + metadata + tail)
        offset, got = w.CREATED.unpack_from(body)
        if got != size or offset < self.heap_offset or offset + size > self.file_length:
            raise ProtocolError("CREATE reply puts %d bytes at %d, outside the heap or not the %d asked"
                                % (got, offset, size))
        writer = ObjectWriter(self, ObjectId(raw), offset, size,
                              self._mapping.span(offset, size, self._mapping, readonly=False), self._epoch)
        self._writers.add(writer)
        return writer

    def _try_create_locally(self, raw, size, metadata, keep):
        """A LocalCreate made in shared memory, or None when the daemon must do it (see _local_writes)."""
        self._reader_for_get()
        if self._deferred_local_aborts:
            self._abort_deferred_locally()
        slot = self._slot
        slot.creating(1)
        try:
            created = self._writes.try_create(raw, size, metadata, keep)
        except BaseException:
            slot.creating(-1)
            raise
        if created is None:
            slot.creating(-1)
        return created

    def _abort_deferred_locally(self):
        while self._deferred_local_aborts:
            created = self._deferred_local_aborts.pop()
            self._writes.abort(created)
            self._slot.creating(-1)

    def _metadata(self, metadata):
        if not isinstance(metadata, (bytes, bytearray, memoryview)):
            raise ArgumentTypeError("metadata must be bytes, got %s" % type(metadata).__name__)
        metadata = bytes(metadata)
        if len(metadata) > self.max_metadata:
            raise BadRequestError("metadata of %d bytes exceeds the limit of %d" % (len(metadata), self.max_metadata))
        return metadata

    def put(self, oid, data, metadata=b"", evict=True, keep=False, timeout=0):
        """Creates, fills and seals an object with a copy of ``data`` (any C-contiguous buffer)."""
        try:
            src = memoryview(data)
        except TypeError:
            raise ArgumentTypeError("put needs a buffer (bytes, bytearray, memoryview, an array), got %s"
                                    % type(data).__name__) from None
        if not src.c_contiguous:
            raise BadRequestError("put needs a C-contiguous buffer")
        src = src.cast("B") if src.format != "B" or src.ndim != 1 else src
        raw = _raw_id(oid)
        if type(metadata) is not bytes or len(metadata) > self.max_metadata:
            metadata = self._metadata(metadata)
        n = src.nbytes
        created = self._try_create_locally(raw, n, metadata, keep)
        if created is not None:
            # Created, filled and sealed in shared memory: no request to the daemon at all.
            try:
                self._mapping.mm[created.data_offset:created.data_offset + n] = src
            except BaseException:
                self._writes.abort(created)
                self._slot.creating(-1)
                raise
            try:
                self._writes.seal(created, raw, n, len(metadata))
            finally:
                self._slot.creating(-1)
            return
        if src.nbytes <= w.PUT_MAX_INLINE and not keep and timeout == 0:
            # One round trip: the daemon creates, copies and seals.
            flags = 0 if evict else w.CREATE_FLAG_NO_EVICT
            self._call(w.PUT_TYPE, b"".join((w.CREATE.pack(raw, flags, src.nbytes, len(metadata)), metadata, src)))
            return
        with self.create(oid, src.nbytes, metadata, evict, keep, timeout) as writer:
            writer.data[:] = src
            writer.seal()

    def _seal(self, writer):
        created = writer._local
        if created is not None:
            self._check_local_writer(writer, "seal")
            self._writes.seal(created, bytes(writer.id), writer.size, created.metadata_length)
            self._slot.creating(-1)
            return
        self._check_writer(writer, "seal")
        self._call(w.SEAL_TYPE, w.ID.pack(bytes(writer.id)))

    def _check_local_writer(self, writer, what):
        if self._closed:
            raise ClientClosedError("cannot %s object %s: this Depot client is closed" % (what, writer.id))
        if self._fork_generation != _process.fork_generation():
            raise ViewReleasedError("cannot %s object %s: it was created in the parent process" % (what, writer.id))

    def _abort(self, writer, exporter=None):
        created = writer._local
        if created is not None:
            if self._closed or self._fork_generation != _process.fork_generation() or writer not in self._writers:
                return  # closed (close aborted it) or the parent's
            alive = exporter() if exporter is not None else None
            if alive is not None:
                # Its space is not reused under buffers still alive: aborted once the last is collected.
                weakref.finalize(alive, self._deferred_local_aborts.append, created)
                return
            self._writes.abort(created)
            self._slot.creating(-1)
            return
        if self._closed or writer._epoch != self._epoch or writer not in self._writers:
            return  # its connection is gone (closed, reconnected, the parent's): the daemon aborted it or will
        if self._fork_generation != _process.fork_generation():
            return
        alive = exporter() if exporter is not None else None
        if alive is not None:
            weakref.finalize(alive, self._abort_later, bytes(writer.id), self._epoch)
            return
        self._call(w.ABORT_TYPE, w.ID.pack(bytes(writer.id)))

    def _abort_later(self, raw, epoch):
        """From a finaliser (any thread): the last buffer of an aborted writer is gone; the ABORT goes before
        the next request on the same connection (list.append is atomic)."""
        conn = self._conn
        if not self._closed and epoch == self._epoch and conn is not None:
            conn.deferred_aborts.append(raw)

    def _check_writer(self, writer, what):
        if self._closed:
            raise ClientClosedError("cannot %s object %s: this Depot client is closed" % (what, writer.id))
        if self._fork_generation != _process.fork_generation() or writer._epoch != self._epoch:
            raise ViewReleasedError("cannot %s object %s: it was created on an earlier connection (in the parent "
                                    "process, or before the daemon restarted), which aborted it" % (what, writer.id))

    def _writer_done(self, writer):
        self._writers.discard(writer)

    # ---- gets (no socket) ------------------------------------------------------------------------------

    def get(self, oid, timeout=None):
        """Gets a sealed object, waiting up to ``timeout`` seconds for it (None, or inf, or 2**31 s and more:
        forever; 0: do not wait). Returns an ``ObjectView`` pinned until released (or collected). Raises
        ObjectMissingError."""
        # _locate and _view, inline: this is the hot path
        if type(oid) is ObjectId:
            raw = oid._bytes
        else:
            raw = _raw_id(oid)
            oid = ObjectId(raw)
        deadline = deadline_of(timeout)
        reader = self._reader_for_get()
        located = reader.get(raw, deadline)
        if located is None:
            self._missing(raw, deadline, timeout)
        view = ObjectView(self._mapping, oid, located)
        self._views[located.pin.position] = weakref.ref(view)  # one atomic store: no lock
        return view

    def _missing(self, raw, deadline, timeout):
        raise ObjectMissingError("object %s %s in the store at %s" % (
            ObjectId(raw), "does not exist" if deadline == 0 else "was not sealed " + describe_timeout(timeout),
            self.directory))

    def _locate(self, oid, timeout):
        """``(raw id, Located, mapping)``: the object pinned, as ``get`` waits for it, and the mapping it lies
        in; raises ObjectMissingError. The caller owns the pin (``located.pin``)."""
        raw = oid._bytes if type(oid) is ObjectId else _raw_id(oid)
        deadline = deadline_of(timeout)
        reader = self._reader_for_get()
        located = reader.get(raw, deadline)
        if located is None:
            self._missing(raw, deadline, timeout)
        return raw, located, reader.mapping

    def get_many(self, oids, timeout=None):
        """Gets several objects, waiting up to ``timeout`` seconds in total. Returns one entry per id, in
        order: an ``ObjectView``, or None for an object still missing at the end."""
        raws = [_raw_id(o) for o in oids]
        deadline = deadline_of(timeout)
        reader = self._reader_for_get()
        out = []
        try:
            for raw in raws:
                located = reader.get(raw, deadline)
                out.append(None if located is None else self._view(raw, located))
        except BaseException:
            for view in out:
                if view is not None:
                    view.release()
            raise
        return out

    def _view(self, raw, located, oid=None):
        view = ObjectView(self._mapping, oid if type(oid) is ObjectId else ObjectId(raw), located)
        self._views[located.pin.position] = weakref.ref(view)  # one atomic store: no lock
        return view

    def contains(self, oid):
        """True when a sealed object with this id exists."""
        located = self._reader_for_get().try_pin(_raw_id(oid))
        if located is None:
            return False
        located.pin.release()
        return True

    def put_array(self, oid, array, metadata=b"", evict=True):
        """Stores a NumPy array: its elements in C order, its dtype and shape in the metadata (see arrays)."""
        from .arrays import put_array
        put_array(self, oid, array, metadata, evict)

    def get_array(self, oid, timeout=None):
        """A read-only NumPy array over the object's shared memory (no copy). The object stays pinned, and the
        memory mapped, for as long as the array (or any array made from it) is alive, even after ``close()``."""
        from .arrays import get_array
        return get_array(self, oid, timeout)

    # ---- the rest (through the daemon) -----------------------------------------------------------------

    def delete(self, oid):
        """Deletes a sealed object (deferred while pinned: the last pin's release frees it). False when there is
        none with this id. In shared memory (``_local_writes``); a spilled object, one being evicted and a missing
        id go to the daemon."""
        raw = _raw_id(oid)
        self._reader_for_get()
        if self._deferred_local_aborts:
            self._abort_deferred_locally()
        if self._writes.delete(raw):
            return True
        _, body = self._call(w.DELETE_TYPE, w.ID.pack(raw))
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
        """Figures of the store, as ``StoreStats``; ``connection_pins`` counts this client's pins."""
        _, body = self._call(w.STAT_TYPE)
        figures = list(w.STAT.unpack_from(body))
        figures[-2] = self._slot.held() if self._slot.owned else 0
        figures[-1] += sum(1 for writer in self._writers if writer._local is not None)
        return StoreStats(*figures, *_kept_and_spilled(self._reader_for_get()))

    def evict(self, nbytes):
        """Evicts least-recently-used unpinned objects until ``nbytes`` are freed; returns the bytes freed."""
        nbytes = check_size(nbytes, "nbytes to evict")
        _, body = self._call(w.EVICT_TYPE, w.EVICT.pack(nbytes))
        return w.EVICT.unpack_from(body)[0]

    def put_object(self, oid, obj, metadata=b"", evict=True, keep=False, timeout=0):
        """Stores any picklable object (pickle protocol 5); its large buffers go straight into shared memory
        (see depot.pickling). ``evict``, ``keep`` and ``timeout`` are as for ``create``."""
        from .pickling import put_object
        put_object(self, oid, obj, metadata, evict, keep, timeout)

    def get_object(self, oid, timeout=None):
        """The object put_object stored, its large buffers read-only views of shared memory (no copy), pinned
        until the last of them is collected (see depot.pickling)."""
        from .pickling import get_object
        return get_object(self, oid, timeout)

    def subscribe(self):
        """Every object event of the store from now on, by any process: sealed (with data and metadata sizes),
        deleted, evicted, spilled, restored.

        Returns
        -------
        Subscription
            An iterator of ``Event`` (blocking), with ``next(timeout=...)``, and a context manager; closed with
            this client. Waiting sleeps on a futex word in shared memory: no polling, no socket.

        Raises
        ------
        ResourceLimitError
            When all 16 subscriber slots of the store are taken.

        Examples
        --------
        >>> with client.subscribe() as events:     # doctest: +SKIP
        ...     event = events.next(timeout=1.0)
        """
        from .notifications import Subscription
        self._reader_for_get()
        subscription = Subscription(self._mapping)
        self._subscriptions.add(subscription)
        return subscription

    @property
    def _memory(self):
        """The whole mapping as a memoryview (for tests that check buffers lie inside it)."""
        return memoryview(self._mapping.mm)

    def _defer_release(self, raw_id, epoch=None):
        """Does nothing: the buffers that hold a pin release it themselves when they are collected."""

    def flush(self):
        """Checks that this client may be used in this process; releases never cross the socket, so nothing
        waits to be sent."""
        self._reader_for_get()

    # ---- lifecycle --------------------------------------------------------------------------------------

    @property
    def closed(self):
        return self._closed

    def close(self):
        """Releases every view's pin (a view whose data is still used by buffers keeps its pin until they are
        collected), aborts every unsealed object, gives the client slot back once no pin is left, and closes
        the connection. The mapping goes when nothing made from it is alive. Harmless when closed."""
        with self._lock:
            if self._closed:
                return
            forked = self._fork_generation != _process.fork_generation()
            if not forked:
                for ref in list(self._views.values()):
                    view = ref()
                    if view is not None:
                        view.release()
                for writer in list(self._writers):
                    if writer._local is not None and writer._state == "open":
                        # Now, even under buffers still alive: a closed client gives back what it held.
                        writer._state = "aborted"
                        writer._data = None
                        self._writes.abort(writer._local)
                        self._slot.creating(-1)
                        self._writers.discard(writer)
                    else:
                        writer.abort()
                self._abort_deferred_locally()
                for subscription in list(self._subscriptions):
                    subscription.close()
                self._slot.close()
            self._closed = True
            self._writers.clear()
            self._conn.close()
            self._reader = None
            self._mapping = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "Client(%r%s)" % (self.directory, ", closed" if self._closed else "")


def _replace_locks_after_fork():
    # A lock another thread of the parent held at the fork would stay locked in the child forever.
    for client in list(_clients):
        client._lock = threading.RLock()


_process.on_fork_in_child(_replace_locks_after_fork)


def _kept_and_spilled(reader):
    """The KEEP and spill figures of ``StoreStats``, read from the store's header as Java's ``StoreSnapshot``
    reads them (the daemon's STAT reply does not carry them): six counters, the spill directory (None unless a
    live daemon spills), then the spill failures (failed spill writes plus failed restores)."""
    base = reader.mapping.base
    figures = [atomics.get_long_volatile(base + offset) for offset in (
        H.KEPT_BYTES_OFFSET, H.KEPT_OBJECTS_OFFSET, H.SPILLED_BYTES_OFFSET, H.SPILLED_OBJECTS_OFFSET,
        H.SPILL_COUNT_OFFSET, H.RESTORE_COUNT_OFFSET)]
    directory = reader.spill_directory() if reader.spiller_is_on() else None
    failures = (atomics.get_long_volatile(base + H.SPILL_FAILURE_COUNT_OFFSET)
                + atomics.get_long_volatile(base + H.RESTORE_FAILURE_COUNT_OFFSET))
    return figures + [directory, failures]
