"""NumPy for shuffles of arrays: imported where used (an optional dependency), slices as flat bytes, and the
split of an array by splitters."""


def numpy():
    """The ``numpy`` module; raises ImportError naming the extra to install when it is missing."""
    try:
        import numpy
    except ImportError:
        raise ImportError("depot.shuffle's arrays need NumPy: pip install 'depot-shm[numpy]'") from None
    return numpy


def flat_bytes(x):
    """``x`` (an array or any bytes-like object) as a flat ``memoryview`` of unsigned bytes; a copy only when
    ``x`` is not C-contiguous."""
    view = memoryview(x)
    if not view.c_contiguous:
        view = memoryview(view.tobytes())
    return view.cast("B") if view.format != "B" or view.ndim != 1 else view


def partition_array(array, splitters):
    """Splits ``array`` by sorted ``splitters`` into ``len(splitters) + 1`` arrays: partition ``i`` holds the
    values ``v`` with ``splitters[i-1] <= v < splitters[i]`` in NumPy's sort order (NaN last), in input order."""
    np = numpy()
    index = np.searchsorted(splitters, array, side="right")
    return [array[index == p] for p in range(len(splitters) + 1)]
