"""The tasks of a Dask DataFrame shuffle through Depot, the same for every Dask version (the graphs that call
them are built by ``_shuffle_legacy`` and ``_shuffle_expr``).

A map task splits its input partition by output partition and writes each non-empty slice into its own Depot
object (the ``per_slice`` layout of ``depot.shuffle``): for frames whose columns and index are NumPy arrays
of fixed-width types, each column's rows are gathered (``np.take``) straight into shared memory, one copy;
other frames (object, string, categorical, extension columns, a MultiIndex, a Series) are stored with
``put_object``. It returns a ``MapOutput``: which objects it wrote and how many rows each holds (a few bytes
per partition), which is all that travels through the scheduler. A reduce task depends on every map's
output, reads its slice of every map in place, concatenates them in map order into its partition (one copy;
in a depot.dask worker straight into the object that holds its result; in a depot.dask.distributed worker into
process memory, which the worker puts into Depot only if a peer asks for it) and deletes the slices it read: Dask's
graph is the coordinator (its dependencies are the barrier, task errors are map failures), so the manifest and
status records of ``depot.shuffle.Shuffle`` are not needed, and each reducer frees its slices as soon as it
has read them. Outside Depot's workers a ``MapOutput`` owns its slices: when Dask drops it (after the last
reducer, or when a compute fails) what is left of them is deleted; in a depot.dask worker the slices carry the
compute's id prefix, which the scheduler sweeps when a compute fails; in a depot.dask.distributed worker the
worker deletes what is left once no worker holds the map's key any more (``DepotData.on_slices_dropped``).

Rows go to partitions as in Dask's own task shuffle (the ``_partitions`` column when there is one, else the
hash of the columns as ``shuffle_group`` computes it), in input order within each slice, so the result is the
task shuffle's, row for row.

Slice ids have the layout of the worker-result ids of ``depot.dask.distributed`` (writer pid and start time,
then a hash), so objects left by a map whose process died are swept like other dead workers' results.
"""

import hashlib
import os
import struct
import weakref

import numpy as np

from .. import _task_context
from ..ids import ID_LENGTH, ObjectId
from ._ids import writer_prefix

__all__ = ["MapOutput", "ShuffleSpec", "keep_result_private", "map_partition", "reduce_partition",
           "reduce_partition_for_steps"]

#: alignment of each column inside a raw slice
_ALIGN = 64
#: how every slice is created: kept (never evicted, spilled under pressure by a daemon with a spill directory)
_KEEP = {"evict": False, "keep": True}
RAW = "raw"
PICKLED = "pickled"


class ShuffleSpec:
    """What every task of one shuffle needs: its token, how rows map to partitions, which partitions are
    produced, the output's meta, the store to use when the task does not run in a Depot worker, and ``keep``:
    the columns the maps store (None: all), when what reads the shuffle selects some."""

    __slots__ = ("token", "columns", "npartitions", "partitions", "ignore_index", "meta", "directory", "keep")

    def __init__(self, token, columns, npartitions, partitions, ignore_index, meta, directory, keep=None):
        self.token = token
        self.columns = columns
        self.npartitions = int(npartitions)
        self.partitions = None if partitions is None else frozenset(partitions)
        self.ignore_index = bool(ignore_index)
        self.meta = meta
        self.directory = directory
        self.keep = None if keep is None else list(keep)

    def keeping(self, columns):
        """This shuffle with the maps storing ``columns`` alone (the rows still go where all columns send them)."""
        return ShuffleSpec(self.token, self.columns, self.npartitions, self.partitions, self.ignore_index,
                           self.meta[list(columns)], self.directory, columns)

    def __reduce__(self):
        return ShuffleSpec, (self.token, self.columns, self.npartitions, self.partitions, self.ignore_index,
                             self.meta, self.directory, self.keep)


class MapOutput:
    """What a map task wrote: the id prefix and nonce its slice ids derive from, the rows of each partition's
    slice, the codec (``RAW`` with the schema, or ``PICKLED``) and, when the input's index was a RangeIndex
    stored as row positions, its (start, step)."""

    __slots__ = ("map", "prefix", "nonce", "rows", "kind", "schema", "index_range", "__weakref__")

    def __init__(self, map_index, prefix, nonce, rows, kind, schema, index_range=None):
        self.map = map_index
        self.prefix = prefix
        self.nonce = nonce
        self.rows = rows
        self.kind = kind
        self.schema = schema
        self.index_range = index_range

    def __reduce__(self):
        # a copy (in another process, or Dask's) never owns the slices: only the map task's own object does
        return MapOutput, (self.map, self.prefix, self.nonce, self.rows, self.kind, self.schema, self.index_range)

    def slice_id(self, partition):
        digest = hashlib.sha256(self.nonce + struct.pack("<Q", partition)).digest()
        return ObjectId(self.prefix + digest[:ID_LENGTH - len(self.prefix)])

    def slice_ids(self):
        return [self.slice_id(p) for p, rows in enumerate(self.rows) if rows]


def _client(directory):
    """The client of the task running now (its scheduler's ``TaskContext``, else this process's client of
    ``directory``), the prefix of the ids of the slices it writes, and whether the map's ``MapOutput`` is to own
    its slices (outside Depot's schedulers, which delete what a task leaves by the prefix)."""
    context = _task_context.current()
    if context is not None:
        return context.client, context.id_prefix, False
    return _task_context.client_for(directory), writer_prefix(), True


# ---- which partition each row goes to ---------------------------------------------------------------------


def partition_ids(df, columns, npartitions):
    """The output partition of each row, as Dask's task shuffle assigns it (``shuffle_group``): the
    ``_partitions`` column, else the hash of ``columns``, modulo ``npartitions``."""
    from dask.dataframe.dispatch import hash_object_dispatch
    if isinstance(columns, str):
        columns = [columns]
    if columns and columns[0] == "_partitions":
        ind = df["_partitions"].to_numpy()
    else:
        ind = hash_object_dispatch(df[list(columns)] if columns else df, index=False).to_numpy()
    ids = ind % ind.dtype.type(npartitions)
    return ids.astype(np.min_scalar_type(max(npartitions - 1, 0)), copy=False)


# ---- the raw codec: fixed-width NumPy columns, each 64-byte aligned ---------------------------------------
#
# A RangeIndex (what reading files, from_map and from_pandas give every partition) is not stored as its int64
# values but as each row's position in the input partition: 16 bits wide as the gap from the slice's previous
# row (the first row's from -1) when every gap of the map fits (schema entry RANGE + "<u2"; the rows of a
# slice are in input order, so the gaps are positive and, with P partitions, about P on average), else the
# positions themselves, 32 bits wide when the partition has fewer than 2**31 rows (RANGE + "<i4"). The
# reducer turns them back into the values, start + step * position, the int64 index Dask's task shuffle
# gives (a RangeIndex taken row by row is an Int64Index).

RANGE = "range"
# The ``_partitions`` column (Dask's output partition of each row, when a shuffle assigns them with a column) holds
# one value per slice, the slice's partition: it is not stored (schema entry PART + its dtype) and the reducer
# fills it in.
PART = "part"


def _raw_schema(df, ignore_index):
    """The dtype str of the index (unless ignored; RANGE + the positions' dtype for a RangeIndex), then one
    per column; None when some column or the index is not a plain fixed-width NumPy array."""
    import pandas as pd
    if not isinstance(df, pd.DataFrame):
        return None
    dtypes = []
    if not ignore_index:
        if isinstance(df.index, pd.RangeIndex):
            dtypes.append(RANGE + np.dtype(np.int32 if len(df) < 2 ** 31 else np.int64).str)
        elif isinstance(df.index, pd.MultiIndex) or not _plain(df.index.dtype):
            return None
        else:
            dtypes.append(df.index.dtype.str)
    for dtype in df.dtypes:
        if not _plain(dtype):
            return None
        dtypes.append(dtype.str)
    return tuple(dtypes)


#: the dtype of a RangeIndex stored as the gaps between the positions of a slice's rows
GAPS = np.dtype("<u2")


def _position_gaps(order, starts):
    """The gap of each row of ``order`` (row positions, sorted within each partition's run ``starts[p]:
    starts[p + 1]``) from the previous row of its run, the first one's from -1; None when one does not fit
    in 16 bits."""
    if len(order) == 0:
        return np.empty(0, GAPS)
    gaps = np.empty(len(order), np.int64)
    gaps[0] = order[0] + 1
    np.subtract(order[1:], order[:-1], out=gaps[1:])
    firsts = starts[:-1][starts[:-1] < starts[1:]]  # the first row of every non-empty run
    gaps[firsts] = order[firsts] + 1
    if gaps.max() > np.iinfo(GAPS).max:
        return None
    return gaps.astype(GAPS)


def _with_constant_partitions(df, schema, ids, columns, ignore_index):
    """``schema`` with the ``_partitions`` column marked PART when it holds each row's partition ``ids``
    (so every slice holds one value of it), else ``schema`` unchanged."""
    if schema is None or list(columns) != ["_partitions"] or "_partitions" not in df.columns:
        return schema
    j = list(df.columns).index("_partitions") + (0 if ignore_index else 1)
    values = df["_partitions"].to_numpy()
    if schema[j].startswith(PART) or np.dtype(schema[j]).kind not in "iu" or not np.array_equal(values, ids):
        return schema
    return schema[:j] + (PART + schema[j],) + schema[j + 1:]


def _stored_dtype(s):
    """The dtype of the array stored for schema entry ``s``; None when nothing is stored (PART)."""
    if s.startswith(PART):
        return None
    return np.dtype(s[len(RANGE):] if s.startswith(RANGE) else s)


def _output_dtype(s):
    if s.startswith(PART):
        return np.dtype(s[len(PART):])
    return np.dtype(np.int64) if s.startswith(RANGE) else np.dtype(s)


def _index_range(df, schema):
    """(start, step) of a RangeIndex stored as positions, else None."""
    if schema and schema[0].startswith(RANGE):
        return int(df.index.start), int(df.index.step)
    return None


def _decode(out, stored, index_range, partition):
    """``out[:] = stored``, the RangeIndex values of positions ``stored`` (or of their gaps, when ``stored``
    has the dtype GAPS) when ``index_range`` is given, or ``partition`` in every row when nothing is stored
    (``stored`` None: the PART column)."""
    if stored is None:
        out.fill(partition)
        return
    if index_range is None:
        out[:] = stored
        return
    start, step = index_range
    if stored.dtype == GAPS:
        np.cumsum(stored, dtype=out.dtype, out=out)
        start -= step  # the gaps count from position -1
        stored = out
    if step == 1:
        np.add(stored, start, out=out, casting="unsafe")
    else:
        np.multiply(stored, step, out=out, casting="unsafe")
        out += start


def _plain(dtype):
    return isinstance(dtype, np.dtype) and dtype.kind in "biufcmM" and not dtype.hasobject


def _layout(schema, rows):
    """(offset, dtype) of each array of a raw slice of ``rows`` rows, and its total size."""
    out, at = [], 0
    for s in schema:
        dtype = _stored_dtype(s)
        out.append((at, dtype))
        if dtype is not None:
            at += -(-rows * dtype.itemsize // _ALIGN) * _ALIGN
    return out, at


def _stored(view, offset, dtype, rows):
    """The array a raw slice stores at ``offset``, read in place; None for a column not stored (PART)."""
    return None if dtype is None else np.frombuffer(view.data, dtype=dtype, count=rows, offset=offset)


def _arrays(df, ignore_index, index_range=None):
    """The arrays a raw slice is gathered from: the index's (None for a RangeIndex stored as positions), then
    every column's."""
    arrays = [] if ignore_index else [None if index_range is not None else df.index.to_numpy()]
    return arrays + [df.iloc[:, j].to_numpy() for j in range(df.shape[1])]


# ---- tasks ------------------------------------------------------------------------------------------------


def map_partition(df, spec, map_index=-1):
    """Writes the slices of input partition ``map_index`` into the store; returns its ``MapOutput``.

    Outside a depot.dask worker the returned object owns the slices: when Dask drops it (every reducer has
    run, or the compute failed or was cancelled) the slices still in the store are deleted. In a depot.dask
    worker the scheduler deletes what a failed compute leaves, by the compute's id prefix."""
    client, prefix, owns = _client(spec.directory)
    n = spec.npartitions
    ids = partition_ids(df, spec.columns, n)
    if spec.keep is not None:
        df = df[spec.keep]
    order = np.argsort(ids, kind="stable")
    counts = np.bincount(ids, minlength=n)[:n]
    starts = np.concatenate(([0], np.cumsum(counts)))
    rows = counts.astype(np.int64)
    if spec.partitions is not None:
        rows[[p for p in range(n) if p not in spec.partitions]] = 0
    schema = _with_constant_partitions(df, _raw_schema(df, spec.ignore_index), ids,
                                       [spec.columns] if isinstance(spec.columns, str) else spec.columns or [],
                                       spec.ignore_index)
    index_range = _index_range(df, schema)
    gaps = _position_gaps(order, starts) if index_range is not None else None
    if gaps is not None:
        schema = (RANGE + GAPS.str,) + schema[1:]
    out = MapOutput(map_index, prefix, os.urandom(8), tuple(int(r) for r in rows), RAW if schema else PICKLED,
                    schema, index_range)
    written = []
    try:
        arrays = _arrays(df, spec.ignore_index, index_range) if schema else None
        for p in range(n):
            if rows[p] == 0:
                continue
            oid = out.slice_id(p)
            take = order[starts[p]:starts[p + 1]]
            if schema:
                _write_raw(client, oid, arrays, schema, take, None if gaps is None else gaps[starts[p]:starts[p + 1]])
            else:
                client.put_object(oid, df.iloc[take], **_KEEP)
            written.append(oid)
    except BaseException:
        for oid in written:
            _delete(client, oid)
        raise
    if owns:
        weakref.finalize(out, delete_left, client, written)
    return out


def delete_left(client, oids):
    """Deletes the slices no reducer deleted (the compute failed or was cancelled before they ran)."""
    if client.closed:
        return
    for oid in oids:
        try:
            if client.contains(oid):
                client.delete(oid)
        except Exception:
            pass  # the daemon is gone or the slice went meanwhile: nothing to free


def _write_raw(client, oid, arrays, schema, take, gaps=None):
    where, size = _layout(schema, len(take))
    w = client.create(oid, size, **_KEEP)
    try:
        data = w.data
        for (offset, dtype), array in zip(where, arrays):
            if dtype is None:  # the PART column: the reducer fills it in
                continue
            # Only C calls get ``out``: a Python-level wrapper (``np.take``, ``np.copyto``'s dispatcher) would
            # hold it in its frame, which distributed's sampling profiler can keep alive past the seal.
            out = np.frombuffer(data, dtype=dtype, count=len(take), offset=offset)
            if array is None:  # a RangeIndex: the rows' positions, or their gaps
                out[...] = take if gaps is None else gaps
            else:
                # mode="clip": the indices are valid, and the default ("raise") gathers into a temporary first
                array.take(take, out=out, mode="clip")
            del out
        del data
        w.seal()
    except BaseException:
        if not w.sealed:
            w.abort()
        raise


def reduce_partition(spec, partition, *outputs):
    """Partition ``partition`` of the shuffled frame: every map's slice in map order, read in place and
    concatenated (one copy); the slices read are deleted.

    In a depot.dask worker a frame of plain columns is concatenated straight into the Depot object that holds
    the task's result, so the worker does not copy it again. In a depot.dask.distributed worker the partition
    is built in process memory and the worker's mapping keeps it there (``DepotData.keep_private``) until a
    peer of the same store asks for it: the task after the shuffle usually runs on the same worker, and a
    private partition costs no store pages (on this machine a first touch of a shared 4 KiB page costs ~20 us,
    of private NumPy memory, in transparent huge pages, about a twentieth of that) and is freed as soon as it
    is released."""
    context = _task_context.current()
    return keep_result_private(_reduce(spec, partition, outputs, context is not None and context.adopt is not None))


def reduce_partition_for_steps(spec, partition, *outputs):
    """Partition ``partition`` in process memory, for the blockwise steps fused after the reduce in the same
    task (``_shuffle_expr``): they read it, and the task's result is theirs (``keep_result_private``)."""
    return _reduce(spec, partition, outputs, False)


def keep_result_private(value):
    """``value``, a reduce task's result (its partition, or what the fused steps made of it alone): kept in the
    depot.dask.distributed worker's memory (``DepotData.keep_private``)."""
    context = _task_context.current()
    if context is not None and context.keep_private is not None:
        context.keep_private(value)
    return value


def _reduce(spec, partition, outputs, into_result):
    """The partition (see ``reduce_partition``); ``into_result``: concatenated straight into a Depot object
    that the depot.dask worker adopts as the task's result."""
    client, prefix, _ = _client(spec.directory)
    parts = [(o, o.rows[partition]) for o in outputs if o.rows[partition]]
    if not parts:
        return _empty(spec)
    views = client.get_many([o.slice_id(partition) for o, _ in parts], timeout=0)
    try:
        missing = [outputs.index(o) for (o, _), v in zip(parts, views) if v is None]
        if missing:
            raise LookupError("the Depot shuffle %s lost the slices of partition %d from maps %s (deleted, or the "
                              "partition was computed twice)" % (spec.token, partition, missing))
        # raw slices whose arrays come out with the same dtypes (the way each map stored them may differ: a
        # RangeIndex as gaps or as positions) are concatenated straight into the partition's arrays
        outputs_of = {None if o.kind != RAW else tuple(_output_dtype(s) for s in o.schema) for o, _ in parts}
        if len(outputs_of) == 1 and None not in outputs_of:
            result = _concat_raw(spec, partition, parts, views, client, prefix, into_result)
        else:
            result = _concat_frames(spec, partition, parts, views, client)
    finally:
        for v in views:
            if v is not None:
                v.release()
                _delete(client, v.id)
    return result


def _frame_of(spec, arrays, total):
    """The DataFrame of ``arrays`` (the index's first unless the index is ignored), without copying them."""
    import pandas as pd
    arrays = list(arrays)
    if spec.ignore_index:
        index = pd.RangeIndex(total)
    else:
        index = pd.Index(arrays.pop(0), name=spec.meta.index.name, copy=False)
    frame = pd.DataFrame(dict(enumerate(arrays)), index=index, copy=False)
    frame.columns = spec.meta.columns
    return frame


def _concat_raw(spec, partition, parts, views, client, prefix, into_result):
    schema = parts[0][0].schema
    total = sum(r for _, r in parts)
    layouts = [_layout(o.schema, r)[0] for o, r in parts]

    def fill(j, out):
        at = 0
        decode = j == 0 and not spec.ignore_index
        for (o, rows), where, view in zip(parts, layouts, views):
            offset, dtype = where[j]
            _decode(out[at:at + rows], _stored(view, offset, dtype, rows), o.index_range if decode else None,
                    partition)
            at += rows

    if into_result:
        context = _task_context.current()
        oid = ObjectId(prefix + os.urandom(ID_LENGTH - len(prefix)))
        frame = _frame_of(spec, [np.empty(total, _output_dtype(s)) for s in schema], total)  # pages untouched
        if _store_frame(client, oid, frame, fill, spec.ignore_index):
            return context.adopt(oid, sum(a.nbytes for a in _arrays_of(frame)))
    arrays = [np.empty(total, dtype=_output_dtype(s)) for s in schema]
    for j, out in enumerate(arrays):
        fill(j, out)
    return _frame_of(spec, arrays, total)


def _arrays_of(frame):
    return [frame.index.to_numpy()] + [frame.iloc[:, j].to_numpy() for j in range(frame.shape[1])]


def _address(buffer):
    return np.frombuffer(buffer, dtype=np.uint8).__array_interface__["data"][0]


def _store_frame(client, oid, frame, fill, ignore_index):
    """Stores ``frame`` (whose columns are not filled yet) as ``put_object`` would, then fills each column
    in place in shared memory with ``fill(j, array)`` (j: the index first, unless ignored, then the columns).
    False, with nothing stored, when some column does not map onto one contiguous out-of-band buffer."""
    from .. import pickling
    collected = pickling._Collector(frame)
    buffers = collected.buffers
    spans = [(_address(raw), raw.nbytes) for _, raw in buffers]
    targets = []
    arrays = _arrays_of(frame)[1 if ignore_index else 0:]
    for array in arrays:
        if not array.flags.c_contiguous:
            return False
        address = array.__array_interface__["data"][0]
        hit = [(i, address - a) for i, (a, n) in enumerate(spans) if a <= address and address + array.nbytes <= a + n]
        if not hit or buffers[hit[0][0]][0] != pickling.KIND_PICKLE_BUFFER:
            return False
        targets.append((hit[0][0], hit[0][1], array.dtype, len(array)))
    stream_offset = pickling.HEADER.size + pickling.ENTRY.size * len(buffers)
    end = stream_offset + len(collected.stream)
    table = []
    for kind, raw in buffers:
        begin = pickling._align(end)
        table.append((begin, raw.nbytes, kind))
        end = begin + raw.nbytes
    w = client.create(oid, end, pickling.MAGIC, **_KEEP)
    try:
        data = w.data
        pickling.HEADER.pack_into(data, 0, pickling.MAGIC, len(buffers), stream_offset, len(collected.stream))
        for i, (begin, length, kind) in enumerate(table):
            pickling.ENTRY.pack_into(data, pickling.HEADER.size + i * pickling.ENTRY.size, begin, length, kind, 0)
        data[stream_offset:stream_offset + len(collected.stream)] = collected.stream
        for j, (i, at, dtype, count) in enumerate(targets):
            fill(j, np.frombuffer(data, dtype=dtype, count=count, offset=table[i][0] + at))
        filled = {i for i, _, _, _ in targets}
        for i, ((begin, length, _), (_, raw)) in enumerate(zip(table, buffers)):
            if i not in filled:  # small buffers of the frame itself (its column labels, say)
                data[begin:begin + length] = raw
        del data
        w.seal()
    except BaseException:
        if not w.sealed:
            w.abort()
        raise
    return True


def _concat_frames(spec, partition, parts, views, client):
    import pandas as pd
    frames = []
    for (o, rows), view in zip(parts, views):
        if o.kind == RAW:
            where, _ = _layout(o.schema, rows)
            arrays = [np.empty(rows, _output_dtype(s)) for s in o.schema]
            for j, ((off, d), out) in enumerate(zip(where, arrays)):
                _decode(out, _stored(view, off, d, rows), o.index_range if j == 0 and not spec.ignore_index else None,
                        partition)
            index = pd.RangeIndex(rows) if spec.ignore_index else pd.Index(arrays.pop(0), name=spec.meta.index.name)
            f = pd.DataFrame(dict(enumerate(arrays)), index=index)
            f.columns = spec.meta.columns
            frames.append(f)
        else:
            frames.append(client.get_object(view.id, timeout=0))
    return pd.concat(frames, ignore_index=spec.ignore_index) if len(frames) > 1 or spec.ignore_index \
        else frames[0].copy()


def _empty(spec):
    meta = spec.meta
    return meta.reset_index(drop=True) if spec.ignore_index else meta.copy()


def _delete(client, oid):
    try:
        client.delete(oid)
    except Exception:
        pass  # already gone: nothing to free
