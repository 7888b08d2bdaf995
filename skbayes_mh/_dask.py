"""Data in a ``dask.array``: ``fit``'s full-data passes as Dask map-reduce over the row
blocks, on whatever scheduler is active (a ``distributed.Client``'s workers when one is).

Each pass runs the same per-part function as on local data (``LinearData.map_parts``), once
per row block, on the worker that holds the block; only the partial sums (a few numbers,
a ``(d, d)`` Hessian) travel back, and are added in block order. The chains then read the
rows at random, which needs the rows on the machine that runs them: :func:`gather` brings
them there after the passes: into memory, or into memory-mapped files on the local disk
where they would take more than half the memory available. Data that cannot be gathered on
one machine's disk are fitted shard by shard instead
(:class:`~skbayes_mh.ConsensusMonteCarlo`).

Dask is imported only when a Dask array arrives (it is an optional dependency).
"""
import os
import sys
import tempfile
import weakref

import numpy as np

from ._passes import combine_scans, scan_part
from ._validation import read_only


def is_dask_array(array):
    """Whether ``array`` is a ``dask.array.Array`` (without importing Dask)."""
    if "dask.array" not in sys.modules:
        return False
    import dask.array as da
    return isinstance(array, da.Array)


def check_dask_data(X, y, classes):
    """``X`` (n, D) and ``y`` (n,) as Dask arrays with the same row blocks, ``X`` in one
    block of columns and float64 or float32 (other real dtypes are converted lazily).

    Raises
    ------
    ValueError, TypeError
        Naming the problem: dimensions, unknown block sizes, mismatched lengths, dtypes.
    """
    import dask.array as da
    if X.ndim != 2:
        raise ValueError(f"Expected a 2-D dask array X of shape (n_samples, n_features); got "
                         f"shape {X.shape}.")
    if any(np.isnan(size) for size in X.chunks[0]):
        raise ValueError("The dask array X has unknown block sizes (e.g. after boolean "
                         "indexing); call X.compute_chunk_sizes() first.")
    if X.dtype.kind not in "biuf":
        raise TypeError(f"X must hold real numbers; the dask array has dtype {X.dtype}.")
    if X.dtype not in (np.float64, np.float32):
        X = X.astype(np.float64)
    if len(X.chunks[1]) > 1:
        X = X.rechunk({1: -1})  # every block holds whole rows
    y = da.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        raise ValueError(f"y should be a 1-D array of shape (n_samples,); got shape {y.shape}.")
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"Found input variables with inconsistent numbers of samples: "
                         f"[{X.shape[0]}, {y.shape[0]}]")
    if not classes and y.dtype.kind not in "biuf":
        raise TypeError(f"y must hold real numbers; the dask array has dtype {y.dtype}.")
    if y.chunks[0] != X.chunks[0]:
        y = y.rechunk((X.chunks[0],))
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"Found array with shape {X.shape}; a minimum of 1 sample and 1 "
                         f"feature is required.")
    return X, y


def row_offsets(X):
    """The first row of each row block of ``X``."""
    return np.concatenate([[0], np.cumsum(X.chunks[0])[:-1]]).astype(np.int64)


def _compute(tasks):
    import dask
    return list(dask.compute(*tasks))


def _scan_block(X, y, offset, classes, weights=None):
    """:func:`~skbayes_mh._passes.scan_part` over one block (its rows' ``weights``, or None),
    its bad rows made rows of the whole array."""
    X, y = np.asarray(X), np.asarray(y)
    found = scan_part(X, y, 0, X.shape[0], classes, weights)
    for key in ("bad_x", "bad_y"):
        if found[key] >= 0:
            found[key] += offset
    return found


def scan_dask_data(X, y, classes, weights=None):
    """:func:`~skbayes_mh._passes.scan_data` as one Dask map-reduce over the row blocks
    (each with its rows' slice of ``weights``, an array of shape (n,) or None)."""
    from dask import delayed
    tasks = [delayed(_scan_block)(xb, yb, int(offset), classes,
                                  None if weights is None else weights[offset:offset + size])
             for xb, yb, offset, size in zip(X.to_delayed().ravel(), y.to_delayed().ravel(),
                                             row_offsets(X), X.chunks[0])]
    return combine_scans(_compute(tasks), classes)


def encode_dask_labels(y, classes, dtype):
    """``y`` as class indices in ``dtype``, lazily, block by block."""
    if y.dtype == dtype and np.array_equal(classes, np.arange(classes.size)):
        return y
    return y.map_blocks(lambda block: np.searchsorted(classes, block).astype(dtype),
                        dtype=dtype)


def _run_on_block(function, container, X, y, weights, intercept, offset, offsets=None):
    X = read_only(np.ascontiguousarray(X))
    y = read_only(np.ascontiguousarray(y, dtype=np.float64))
    part = container(X, y, read_only(weights), intercept, row_offset=offset,
                     offset=None if offsets is None else read_only(offsets))
    return function(part, 0, part.n_rows)


def map_dask_parts(function, data):
    """``[function(part, 0, rows) for each row block]`` as Dask tasks, in block order:
    ``part`` is a data container of ``data``'s type (:class:`~skbayes_mh.models.LinearData`)
    holding the block's rows (its ``row_offset`` the block's first row)."""
    from dask import delayed
    tasks = []
    for xb, yb, offset, size in zip(data.X.to_delayed().ravel(), data.y.to_delayed().ravel(),
                                    row_offsets(data.X), data.X.chunks[0]):
        weights = data.weights[offset:offset + size] if data.weights.size else data.weights
        offsets = data.offset[offset:offset + size] if data.offset.size else None
        tasks.append(delayed(_run_on_block)(function, type(data), xb, yb, weights, data.intercept,
                                            int(offset), offsets))
    return _compute(tasks)


def gather(data):
    """``data`` with its rows brought to this machine for the chains, block by block:
    into this process's memory (:func:`gather_to_memory`), or, where ``X`` and ``y`` take
    more than :data:`GATHER_IN_MEMORY_MAX_SHARE` of the memory available
    (:func:`available_memory`), into read-only memmaps (:func:`gather_to_disk`), which the
    chains read in place as they read any memmap."""
    nbytes = data.X.nbytes + data.y.shape[0] * np.dtype(np.float64).itemsize
    available = available_memory()
    on_disk = available is not None and nbytes > GATHER_IN_MEMORY_MAX_SHARE * available
    gathered = gather_to_disk if on_disk else gather_to_memory
    X, y = gathered(data.X), gathered(data.y.astype(np.float64))
    X = read_only(np.ascontiguousarray(X))
    return type(data)(X, read_only(np.ascontiguousarray(y, dtype=np.float64)), data.weights,
                      data.intercept, offset=data.offset if data.offset.size else None)


#: A ``dask.array``'s rows are gathered into memory up to this share of the memory the
#: machine has available, into memory-mapped files above (:func:`gather`).
GATHER_IN_MEMORY_MAX_SHARE = 0.5
#: The environment variable naming the folder of those files (default: the system's
#: temporary folder, ``tempfile.gettempdir()``).
TEMP_FOLDER_VARIABLE = "SKBAYES_MH_TEMP_FOLDER"
#: :func:`gather_to_memory` and :func:`gather_to_disk` compute row blocks at most this many
#: bytes at a time.
GATHER_BATCH_BYTES = 1 << 28


def available_memory():
    """Bytes of memory available to new allocations without swapping: Linux's
    ``MemAvailable`` (free memory and the page cache it may reclaim); elsewhere the free
    pages (``os.sysconf``); None when neither is known."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def gather_to_disk(array):
    """A ``dask.array`` (rows in blocks, whole rows each) written block by block into a
    ``.npy`` file in the folder :data:`TEMP_FOLDER_VARIABLE` names, and read back as a
    read-only memmap. At most :data:`GATHER_BATCH_BYTES` of blocks (and at least one)
    are in this process's memory at a time; the page cache holds the rest, as for any
    memmap. The file is removed when the memmap and every view of it are freed (or at
    exit)."""
    folder = os.environ.get(TEMP_FOLDER_VARIABLE) or tempfile.gettempdir()
    handle, path = tempfile.mkstemp(prefix="skbayes_mh-rows-", suffix=".npy", dir=folder)
    os.close(handle)
    try:
        out = np.lib.format.open_memmap(path, mode="w+", dtype=array.dtype,
                                        shape=array.shape)
        _write_blocks(array, out)
        out.flush()
        del out
        rows = np.load(path, mmap_mode="r")
    except BaseException:
        _remove(path)
        raise
    weakref.finalize(rows, _remove, path)
    return rows


def gather_to_memory(array):
    """A ``dask.array`` (rows in blocks, whole rows each) as a NumPy array, filled block by
    block as :func:`gather_to_disk` fills its file: ``dask.compute`` of the whole array
    concatenated the blocks on a worker and sent that here, so that at 10^8 x 10 float32
    rows (4 GB) a worker peaked at 8.3 GB and this process grew by twice the data."""
    out = np.empty(array.shape, dtype=array.dtype)
    _write_blocks(array, out)
    return out


def _write_blocks(array, out):
    """``out[:] = array``, computing at most :data:`GATHER_BATCH_BYTES` of row blocks (and
    at least one) at a time."""
    import dask

    bounds = np.concatenate([[0], np.cumsum(array.chunks[0])]).astype(np.int64)
    row_bytes = array.dtype.itemsize * int(np.prod(array.shape[1:], dtype=np.int64))
    first = 0
    while first < len(bounds) - 1:
        last = first + 1  # blocks [first, last) in one compute, within the budget
        while (last < len(bounds) - 1
               and (bounds[last + 1] - bounds[first]) * row_bytes <= GATHER_BATCH_BYTES):
            last += 1
        blocks = dask.compute(*[array.blocks[k] for k in range(first, last)])
        for k, block in zip(range(first, last), blocks):
            out[bounds[k]:bounds[k + 1]] = block
        first = last


def _remove(path):
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


def take_rows(data, rows):
    """Rows ``rows`` (sorted) of ``X`` and ``y`` as in-memory arrays."""
    import dask
    X, y = dask.compute(data.X[rows], data.y[rows])
    return np.ascontiguousarray(X), np.ascontiguousarray(y)
