"""Full-data passes, streamed chunk by chunk on every core.

A pass splits the rows into a fixed number of contiguous stripes (so that its result does
not depend on the number of cores), runs one stripe per thread (the numba kernels and
NumPy's reductions release the GIL; BLAS is held to one thread meanwhile, so that the
stripes do not compete for cores), and returns the stripes' partial results in order.
Within a stripe a caller reads ``PASS_CHUNK`` rows at a time, so the temporaries of a pass
stay at a few MB per thread whatever the data's size: data on disk (``np.memmap``) are read
where they are, never loaded whole.
"""
import contextlib
import ctypes
import os
import sys
import threading
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor

import numba
import numpy as np
import scipy.sparse as sp
from threadpoolctl import ThreadpoolController

#: Rows per chunk of a full-data pass (bounds the temporaries at a few MB per column).
PASS_CHUNK = 65_536
#: Column groups of a block of vectors (:func:`column_slices`) take at most about this many
#: bytes.
BLOCK_TEMPORARY_BYTES = 1 << 20
#: A block of vectors goes through a full-data pass (a low-rank Laplace's Hessian products)
#: in groups of columns of at most about this many bytes: each pass's threads then hold
#: partial products of a group's size, not of the block's (tens of MB each on wide data),
#: for one more reading of the rows a group (a few percent of the work of the products).
PASS_BLOCK_BYTES = 1 << 22
#: Contiguous stripes per pass: the unit of parallel work, and of the summation order.
PASS_STRIPES = 32


def pass_threads():
    """Threads a pass runs on: every core this process may use, but no more than numba's
    thread count (``NUMBA_NUM_THREADS``), which joblib's process workers set to their share
    of the cores (a fit inside ``GridSearchCV(n_jobs=2)`` on 2 cores: 1 thread)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, int(numba.config.NUMBA_NUM_THREADS)))


_blas_controller = None
_blas_lock = threading.Lock()
_blas_holders = 0
_blas_limiter = None


@contextlib.contextmanager
def one_blas_thread():
    """A context in which BLAS runs on one thread (every BLAS library loaded: NumPy's,
    and SciPy's, which the numba kernels call), however many threads of this process are
    inside one at once: the first in limits BLAS, the last out gives back its thread count
    (each restoring what it found would leave the count at one when two fits overlap).

    threadpoolctl finds the libraries once, on the first call (``threadpool_limits`` looks
    for them on every call: about 1.6 ms, a few percent of a small fit that limits BLAS ten
    times)."""
    global _blas_controller, _blas_holders, _blas_limiter
    with _blas_lock:
        if _blas_holders == 0:
            if _blas_controller is None:
                _blas_controller = ThreadpoolController()
            _blas_limiter = _blas_controller.limit(limits=1, user_api="blas")
        _blas_holders += 1
    try:
        yield
    finally:
        with _blas_lock:
            _blas_holders -= 1
            if _blas_holders == 0:
                _blas_limiter.restore_original_limits()
                _blas_limiter = None


def return_freed_memory():
    """Give the memory the passes' threads freed back to the system (glibc on Linux:
    ``malloc_trim``); elsewhere nothing.

    glibc keeps a pool (an arena) of freed memory for each thread that allocated; the
    setup's passes free tens of MB of blocks in their threads, which the process would
    otherwise keep through the whole sampling run (measured on a 100,000 x 20,000 bag of
    words: about 190 MB kept, 16 MB of it live). Returns whether memory was returned.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        trim = ctypes.CDLL(None).malloc_trim  # the C library this process runs on
    except (OSError, AttributeError):  # not glibc (e.g. musl)
        return False
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return bool(trim(0))


_sharing = threading.Lock()
_active = {"works": 0}
#: Passes run one at a time in a process (each on its :func:`share_of_cores`): a threaded
#: pass holds BLAS to one thread and gives it back itself, and two at once would undo each
#: other's limits (the second records the first's limit as BLAS's own) on cores they share
#: anyway. A pass never runs another inside its stripes.
_one_pass_at_a_time = threading.Lock()


@contextlib.contextmanager
def share_of_cores():
    """The threads a piece of parallel work (a full-data pass, or a fit's chains) may use:
    :func:`pass_threads` divided among the pieces running in this process at once, so that
    two fits in threads of one process share the cores instead of each taking them all."""
    with _sharing:
        _active["works"] += 1
        share = max(1, pass_threads() // _active["works"])
    try:
        yield share
    finally:
        with _sharing:
            _active["works"] -= 1


def stripes(n_rows, chunk=PASS_CHUNK, n_stripes=PASS_STRIPES):
    """``(start, stop)`` of up to ``n_stripes`` contiguous row ranges, cut at multiples of
    ``chunk`` (so every stripe reads whole chunks), covering ``0..n_rows-1``."""
    n_chunks = max(1, -(-n_rows // chunk))
    per_stripe = -(-n_chunks // min(n_stripes, n_chunks))
    edges = list(range(0, n_rows, per_stripe * chunk)) + [n_rows]
    return list(zip(edges[:-1], edges[1:])) if n_rows else []


def column_slices(n_rows, n_columns, group_bytes=None):
    """Slices of consecutive columns of an ``(n_rows, n_columns)`` float64 block, each taking
    at most about ``group_bytes`` (default :data:`BLOCK_TEMPORARY_BYTES`; at least one
    column): for working on blocks of vectors (a low-rank Laplace's are tens of MB on wide
    data) without temporaries of their size."""
    group_bytes = BLOCK_TEMPORARY_BYTES if group_bytes is None else group_bytes
    group = max(1, group_bytes // (8 * max(1, n_rows)))
    return [slice(first, first + group) for first in range(0, n_columns, group)]


def chunk_rows(m, n_rows):
    """Rows per chunk for per-row ``(m, m)`` derivative buffers: ``PASS_CHUNK``, fewer for
    many outputs (about 8 MB of buffers a thread)."""
    return max(1, min(PASS_CHUNK, n_rows, 1_000_000 // (m * m)))


def chunks(start, stop, chunk=PASS_CHUNK):
    """``(start, stop)`` of consecutive ranges of at most ``chunk`` rows."""
    for begin in range(start, stop, chunk):
        yield begin, min(begin + chunk, stop)


#: The most threads the process's shared pool (:func:`in_threads`) holds at once: calls
#: beyond wait for one to finish (each call takes as many as its share of the cores).
SHARED_POOL_MAX_THREADS = 64
_shared_pool = None
_shared_pool_lock = threading.Lock()
_in_shared_pool = threading.local()


def _pool():
    """The process's pool of threads, started on first use and kept (its idle threads are
    reused: starting two threads took 4 to 8 ms a fit while other threads held the GIL, 30
    ms of an 80 ms default fit of 200 rows; a forked child makes its own)."""
    global _shared_pool
    with _shared_pool_lock:
        if _shared_pool is None:
            _shared_pool = ThreadPoolExecutor(max_workers=SHARED_POOL_MAX_THREADS,
                                              thread_name_prefix="skbayes_mh")
        return _shared_pool


def _forget_pool():
    """In a forked child: the parent's threads are not there, nor may its lock be free."""
    global _shared_pool, _shared_pool_lock
    _shared_pool, _shared_pool_lock = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def in_threads(function, calls, threads):
    """``[function(*call) for call in calls]``, in order, in at most ``threads`` threads of
    the process's shared pool, each taking the next call as it finishes one. The first
    exception a call raises, in the calls' order, is raised here as soon as the calls before
    it have returned; the calls not yet started are then dropped (those running end in the
    background: a thread cannot be stopped). From a thread of the pool itself (a call that
    calls this again) the calls run in that thread, one after another, so that nested calls
    never wait for threads their callers hold."""
    calls = list(calls)
    threads = min(int(threads), len(calls))
    if threads <= 1 or getattr(_in_shared_pool, "active", False):
        return [function(*call) for call in calls]
    futures = [Future() for _ in calls]
    lock = threading.Lock()
    order = iter(range(len(calls)))

    def worker():
        _in_shared_pool.active = True
        try:
            while True:
                with lock:
                    k = next(order, None)
                if k is None:
                    return
                if not futures[k].set_running_or_notify_cancel():
                    continue  # dropped after an earlier call's exception
                try:
                    futures[k].set_result(function(*calls[k]))
                except BaseException as error:  # noqa: B036 (re-raised by the caller)
                    futures[k].set_exception(error)
        finally:
            _in_shared_pool.active = False

    pool = _pool()
    for _ in range(threads):
        pool.submit(worker)
    try:
        return [future.result() for future in futures]
    finally:
        for future in futures:
            future.cancel()  # only those not started


def map_stripes(function, n_rows, chunk=PASS_CHUNK):
    """``[function(start, stop) for each stripe]``, in order, the stripes on every core.

    ``function`` reads its rows ``chunk`` at a time (see :func:`chunks`) and returns its
    partial result. The first exception a stripe raises is raised here.
    """
    with _one_pass_at_a_time:
        return map_on_cores(lambda stripe: function(*stripe), stripes(n_rows, chunk))


def map_on_cores(function, items):
    """``[function(item) for item in items]``, in order, in as many threads as
    :func:`share_of_cores` gives (one BLAS thread each); the first exception a call raises is
    raised here.

    Parameters
    ----------
    function : callable
        Called with one item; releases the GIL for the threads to pay (numba kernels,
        numpy's sorts, scipy's FFTs).
    items : iterable
        The calls' arguments, one a call.

    Returns
    -------
    list
        The calls' results, in the items' order.
    """
    items = list(items)
    with share_of_cores() as threads:
        threads = min(threads, len(items))
        if threads <= 1:
            return [function(item) for item in items]
        with one_blas_thread():
            return in_threads(function, [(item,) for item in items], threads)


def add_parts(total, part):
    """``total + part`` entry by entry for tuples of numbers and arrays (``part`` when
    ``total`` is None); ``total``'s arrays are added to in place."""
    if total is None:
        return tuple(part)
    return tuple(_add_into(a, b) for a, b in zip(total, part))


def _add_into(a, b):
    if isinstance(a, np.ndarray):
        a += b
        return a
    return a + b


def sum_stripes(function, n_rows, chunk=PASS_CHUNK):
    """:func:`map_stripes` whose results (tuples of numbers and arrays) are summed in stripe
    order (so the sum does not depend on the number of cores) as they arrive, with at most
    one stripe per thread waiting: a pass whose partial result is a (d, d) Hessian holds a
    few of them, not one per stripe."""
    ranges = stripes(n_rows, chunk)
    total = None
    with _one_pass_at_a_time, share_of_cores() as threads:
        threads = min(threads, len(ranges))
        if threads <= 1:
            for start, stop in ranges:
                total = add_parts(total, function(start, stop))
            return total
        with one_blas_thread(), \
                ThreadPoolExecutor(max_workers=threads) as executor:
            waiting = deque()
            for start, stop in ranges:
                waiting.append(executor.submit(function, start, stop))
                if len(waiting) > threads:
                    total = add_parts(total, waiting.popleft().result())
            while waiting:
                total = add_parts(total, waiting.popleft().result())
    return total


def first_bad_row(array, start, stop):
    """The first row in ``start..stop-1`` of ``array`` (1-D or 2-D) holding NaN or
    infinity, or -1."""
    for begin, end in chunks(start, stop):
        block = np.asarray(array[begin:end])
        with np.errstate(over="ignore", invalid="ignore"):
            if np.isfinite(block.sum()):  # one reduction, no temporary, for the usual case
                continue
        finite = np.isfinite(block) if block.ndim == 1 else np.isfinite(block).all(axis=1)
        bad = np.flatnonzero(~finite)
        if bad.size:
            return begin + int(bad[0])
    return -1


def column_extremes(block):
    """Each column's minimum and maximum over the rows of the C-ordered ``block`` (1-D: its
    minimum and maximum). The rows are folded into rows of at least 512 values first: NumPy
    reduces a C-ordered array along its rows several times faster when they are long."""
    if block.ndim == 1:
        return block.min(), block.max()
    n_rows, width = block.shape
    fold = max(1, 512 // max(width, 1))
    folded = (n_rows // fold) * fold
    parts = [block[:folded].reshape(folded // fold, fold * width)] if folded else []
    low = [part.min(axis=0).reshape(fold, width).min(axis=0) for part in parts]
    high = [part.max(axis=0).reshape(fold, width).max(axis=0) for part in parts]
    if folded < n_rows:
        low.append(block[folded:].min(axis=0))
        high.append(block[folded:].max(axis=0))
    return np.minimum.reduce(low), np.maximum.reduce(high)


def moments(array, start, stop, weights=None):
    """Sums over rows ``start..stop-1`` of ``array`` (1-D, or 2-D column by column), each
    row counted ``weights[i]`` times (once without weights), shifted by the first row for
    accuracy: ``count``, ``shift``, ``total``, ``square``, and the unweighted ``low`` and
    ``high`` (the minimum and maximum over the rows, a row of weight 0 included).
    :func:`combine_moments` turns parts of them into means, sds and ranges."""
    width = np.shape(array)[1:]
    shift = (np.asarray(array[start], dtype=np.float64).copy() if stop > start
             else np.zeros(width))
    total, square, count = np.zeros(width), np.zeros(width), 0.0
    low, high = np.full(width, np.inf), np.full(width, -np.inf)
    for begin, end in chunks(start, stop):
        block = np.asarray(array[begin:end], dtype=np.float64) - shift
        weight = np.ones(end - begin) if weights is None else weights[begin:end]
        count += float(weight.sum())
        # Sums over rows as vector-matrix products: NumPy's reductions along the rows of a
        # C-ordered block are several times slower.
        total += weight @ block
        square += weight @ (block * block)
        block_low, block_high = column_extremes(block)
        low, high = np.minimum(low, block_low + shift), np.maximum(high, block_high + shift)
    return {"count": count, "shift": shift, "total": total, "square": square, "low": low,
            "high": high}


def combine_moments(parts):
    """``(mean, sd, minimum, maximum)`` over the rows of all ``parts`` (:func:`moments`'
    results)."""
    n = sum(part["count"] for part in parts)
    mean = sum(part["shift"] * part["count"] + part["total"] for part in parts) / n
    # Each part's sum of squares about the overall mean, from its shifted sums.
    square = sum(part["square"] + 2 * (part["shift"] - mean) * part["total"]
                 + part["count"] * (part["shift"] - mean) ** 2 for part in parts)
    return (mean, np.sqrt(np.maximum(square, 0.0) / n),
            np.minimum.reduce([part["low"] for part in parts]),
            np.maximum.reduce([part["high"] for part in parts]))


def scan_data(X, y, classes=False, weights=None):
    """One parallel pass over ``X`` (n, D) and ``y`` (n,): the first row with NaN or
    infinity in either (a ``ValueError`` naming it), the columns' means and sds, and what
    ``fit`` needs of ``y`` (means and sds weighted by ``weights`` when given).

    Returns
    -------
    dict with ``x_mean``, ``x_std``, ``x_min`` and ``x_max`` (n_features,) and ``classes``
    (the sorted distinct values of ``y``, with ``classes``), or ``min``, ``mean`` and ``std``
    of ``y`` (numeric ``y``).
    """
    if sp.issparse(X):
        return combine_scans([scan_sparse(X, y, classes, weights)], classes)
    parts = map_stripes(lambda start, stop: scan_part(X, y, start, stop, classes, weights),
                        X.shape[0])
    return combine_scans(parts, classes)


def first_bad_sparse_row(X):
    """The first row of the CSR matrix ``X`` storing NaN or infinity, or -1 (the implicit
    zeros are finite)."""
    bad = np.flatnonzero(~np.isfinite(X.data))
    return int(np.searchsorted(X.indptr, bad[0], side="right") - 1) if bad.size else -1


def scan_sparse(X, y, classes, weights=None):
    """:func:`scan_part` of a CSR matrix ``X`` (canonical, its arrays as the kernels read
    them), in vectorised sparse products: the stored values are checked (the implicit zeros
    are finite) and the columns' sums and sums of squares taken unshifted, which keeps the
    zeros implicit."""
    bad_x = first_bad_sparse_row(X)
    bad_y = -1 if classes else first_bad_row(y, 0, y.shape[0])
    found = {"bad_x": bad_x, "bad_y": bad_y}
    weight = np.ones(X.shape[0]) if weights is None else weights
    if bad_x < 0:
        found["x"] = {"count": float(weight.sum()), "shift": np.zeros(X.shape[1]),
                      "total": np.asarray(weight @ X),
                      "square": np.asarray(weight @ X.multiply(X)),
                      "low": X.min(axis=0).toarray().ravel(),
                      "high": X.max(axis=0).toarray().ravel()}
    if classes:
        found["classes"] = np.unique(np.asarray(y))
    elif bad_y < 0:
        found["y"] = moments(y, 0, y.shape[0], weights)
    return found


def scan_part(X, y, start, stop, classes, weights=None):
    """:func:`scan_data` over rows ``start..stop-1`` (the first bad rows in that range)."""
    bad_x = first_bad_row(X, start, stop)
    bad_y = -1 if classes else first_bad_row(y, start, stop)
    found = {"bad_x": bad_x, "bad_y": bad_y}
    if bad_x < 0:
        found["x"] = moments(X, start, stop, weights)
    if classes:
        found["classes"] = np.unique(np.concatenate(
            [np.asarray(y[start:start])]  # empty, of y's dtype, for an empty part
            + [np.unique(np.asarray(y[a:b])) for a, b in chunks(start, stop)]))
    elif bad_y < 0:
        found["y"] = moments(y, start, stop, weights)
    return found


def combine_scans(parts, classes):
    """:func:`scan_data`'s result from its parts' (stripes or blocks, in row order): an
    error naming the first bad row, the columns' moments, the classes or ``y``'s."""
    for key, name in (("bad_x", "X"), ("bad_y", "y")):
        rows = [part[key] for part in parts if part[key] >= 0]
        if rows:
            raise ValueError(f"Input {name} contains NaN or infinity (first in row {min(rows)}).")
    x_mean, x_std, x_min, x_max = combine_moments([part["x"] for part in parts])
    summary = {"x_mean": x_mean, "x_std": x_std, "x_min": x_min, "x_max": x_max}
    if classes:
        summary["classes"] = np.unique(np.concatenate([part["classes"] for part in parts]))
    else:
        mean, std, low, _ = combine_moments([part["y"] for part in parts])
        summary.update(min=float(low), mean=float(mean), std=float(std))
    return summary


def encode_labels(y, classes, dtype):
    """``y`` as class indices ``0..K-1`` of ``dtype``: ``y`` itself when it already is one
    (no copy), else a new array filled chunk by chunk on every core."""
    if y.dtype == dtype and np.array_equal(classes, np.arange(classes.size)):
        return y
    encoded = np.empty(y.shape[0], dtype=dtype)

    def stripe(start, stop):
        for a, b in chunks(start, stop):
            encoded[a:b] = np.searchsorted(classes, np.asarray(y[a:b]))

    map_stripes(stripe, y.shape[0])
    return encoded
