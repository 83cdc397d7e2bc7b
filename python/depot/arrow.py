"""Arrow tables in Depot, read zero-copy: the Python side of ``dev.depot.arrow.DepotArrow`` (docs/ARROW.md).

An object holds one Arrow IPC stream (schema, record batches, end-of-stream; uncompressed), written by
``put_table`` here or ``DepotArrow.put`` in Java, read by either. ``get_table`` returns a ``pyarrow.Table`` whose
buffers lie in the store's shared memory: nothing is copied, and the object stays pinned until every buffer of the
table (and of whatever was sliced from it) has been garbage-collected.

    import depot, depot.arrow, pyarrow as pa
    with depot.connect() as client:
        oid = depot.ObjectId.of("dataset/part-7")
        depot.arrow.put_table(client, oid, pa.table({"x": [1.0, 2.0]}))
        table = depot.arrow.get_table(client, oid)       # zero-copy
        frame = table.to_pandas()                         # pandas copies (zero-copy where it can)

Needs pyarrow (``pip install 'depot-shm[arrow]'``); the rest of depot works without it.
"""

import weakref

__all__ = ["MEDIA_TYPE", "get_table", "put_table", "read_dataset", "read_stream"]

#: The object metadata of an Arrow stream (as ``ArrowStreamDescriptor.MEDIA_TYPE`` in Java).
MEDIA_TYPE = b"application/vnd.apache.arrow.stream"
#: First line of a Spark dataset's catalogue object (``dev.depot.spark.Catalogue`` in Java).
CATALOGUE_MAGIC = "depot-spark 1"


def _pyarrow():
    try:
        import pyarrow
        import pyarrow.ipc  # noqa: F401  (a submodule: imported for its side effect on pyarrow)
    except ImportError:
        raise ImportError("depot.arrow needs pyarrow: pip install 'depot-shm[arrow]'") from None
    return pyarrow


class _Pin:
    """Owns a view's pin for the Arrow buffers made over its memory: released once they are all collected."""

    __slots__ = ("data", "__weakref__")

    def __init__(self, data):
        #: the view's memoryview: keeps the mapping alive (the client unmaps only once no export remains)
        self.data = data


def put_table(client, oid, table, evict=True):
    """Writes ``table`` (a ``pyarrow.Table`` or ``RecordBatch``) as an Arrow IPC stream into a new sealed object.

    The stream's exact size is measured first, then it is written once, straight into shared memory.

    Parameters
    ----------
    client : depot.Client
    oid : depot.ObjectId or its 20 raw bytes
    table : pyarrow.Table or pyarrow.RecordBatch
    evict : bool
        Whether least-recently-used objects may be evicted to make room (else StoreFullError).

    Returns
    -------
    int
        The object's size in bytes.
    """
    pa = _pyarrow()
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    if any(pa.types.is_dictionary(f.type) for f in table.schema):
        raise TypeError("put_table stores plain columns; decode dictionary columns first "
                        "(table.column(i).dictionary_decode())")
    options = pa.ipc.IpcWriteOptions(compression=None)
    sink = pa.MockOutputStream()
    with pa.ipc.new_stream(sink, table.schema, options=options) as w:
        w.write_table(table)
    size = sink.size()
    with client.create(oid, size, MEDIA_TYPE, evict) as writer:
        target = pa.py_buffer(writer.data)
        out = pa.FixedSizeBufferWriter(target)
        with pa.ipc.new_stream(out, table.schema, options=options) as w:
            w.write_table(table)
        written = out.tell()
        out.close()
        del w, out, target  # the writer's memory must have no exports left when it is sealed
        if written != size:
            raise AssertionError("wrote %d bytes of a stream measured at %d" % (written, size))
        writer.seal()
    return size


def read_stream(buffer):
    """Reads an Arrow IPC stream held in ``buffer`` (a ``pyarrow.Buffer``) without copying; checks that it is
    complete, uncompressed and free of dictionaries, as the Java reader does. Raises ValueError."""
    pa = _pyarrow()
    try:
        reader = pa.ipc.open_stream(buffer)
        if any(pa.types.is_dictionary(f.type) for f in reader.schema):
            raise ValueError("the Arrow stream is dictionary-encoded; depot.arrow reads plain streams")
        batches = list(reader)
    except (pa.ArrowException, OSError) as e:
        raise ValueError("not a complete Arrow IPC stream: %s" % e) from e
    table = pa.Table.from_batches(batches, schema=reader.schema)
    table.validate(full=True)
    return table


def get_table(client, oid, timeout=None):
    """The Arrow stream in object ``oid`` as a ``pyarrow.Table`` over shared memory, without a copy.

    Parameters
    ----------
    client : depot.Client
    oid : depot.ObjectId or its 20 raw bytes
    timeout : float or None
        Seconds to wait for the object to be sealed (None: forever; 0: do not wait).

    Returns
    -------
    pyarrow.Table
        Read-only; the object stays pinned until the table and every buffer taken from it are collected.

    Raises
    ------
    ValueError
        When the object is not a complete, uncompressed Arrow IPC stream without dictionaries.
    depot.ObjectMissingError
        When it does not exist within ``timeout``.

    Examples
    --------
    >>> table = get_table(client, oid)             # doctest: +SKIP
    >>> table.column("x").to_numpy().sum()         # doctest: +SKIP
    """
    pa = _pyarrow()
    view = client.get(oid, timeout)
    try:
        pin = _Pin(view.data)
        address = pa.py_buffer(pin.data).address
        buffer = pa.foreign_buffer(address, view.size, base=pin)
        table = read_stream(buffer)
    except BaseException:
        view.release()
        raise
    # The pin now belongs to the buffers: released (at the next request) once none of them is alive.
    view._detach()
    weakref.finalize(pin, client._defer_release, bytes(view.id), client._epoch)
    return table


def read_dataset(client, name, timeout=0):
    """A dataset that Spark wrote with ``df.write.format("depot").save(name)``, as one ``pyarrow.Table`` whose
    chunks are the parts' batches, over shared memory (no copy).

    Parameters
    ----------
    client : depot.Client
    name : str
        The dataset's name, as given to ``save``.
    timeout : float or None
        Seconds to wait for the catalogue object (0: do not wait).

    Returns
    -------
    pyarrow.Table

    Raises
    ------
    ValueError
        When the catalogue object is not a depot-spark catalogue.
    """
    pa = _pyarrow()
    from .ids import ObjectId
    with client.get(ObjectId.of("spark/" + name), timeout) as view:
        lines = view.to_bytes().decode("utf-8").split("\n")
    if len(lines) < 2 or lines[0] != CATALOGUE_MAGIC or not lines[1].startswith("schema "):
        raise ValueError("object spark/%s is not a %r catalogue" % (name, CATALOGUE_MAGIC))
    tables = []
    for line in lines[2:]:
        if not line:
            continue
        fields = line.split(" ")
        if len(fields) != 4 or fields[0] != "part":
            raise ValueError("catalogue of dataset %r has a bad line: %r" % (name, line))
        tables.append(get_table(client, ObjectId.from_hex(fields[1]), timeout=0))
    if not tables:
        raise ValueError("dataset %r has no parts (written from an empty DataFrame)" % name)
    return pa.concat_tables(tables)
