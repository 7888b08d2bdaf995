"""Where the subsampling tests draw their random rows from: a partial Fisher-Yates shuffle of
``0..N-1``, dense or sparse.

Dense (``N <= DENSE_POOL_MAX_ROWS``): the permutation is an array of N row indices, kept by
the chain from call to call. Sparse (larger N): the permutation is virtual, the identity
except where a draw displaced an entry; the displaced entries live in a hash table of
``O(rows drawn)`` entries, cleared after each test. Both draw exactly the same distribution
(uniform subsets, without replacement), but the sparse pool's memory is bounded by the
largest minibatch instead of N (its arrays are reserved at full length but the operating
system only commits the pages written, the first ones).

A pool is the tuple ``(rows, table, entries, counters)`` (numba type :data:`POOL`):

- ``rows`` (int64): dense, the permutation, whose first entries are the batch; sparse,
  the batch's rows in order;
- ``table`` (int64, a power of two at least 2N; empty when dense): slot -> 1 + entry index,
  0 for free; only its first ``2**counters[1]`` slots are in use;
- ``entries`` (int64, (N, 3)): ``(position, row, slot)`` of each displaced position;
- ``counters``: ``[entries in use, log2 of the slots in use, 1 when dense]``.
"""
import numpy as np
from numba import types

from ._jit import I8, INDEX, jit

#: Up to this many rows a chain keeps the dense pool (8 bytes a row: 8 MB).
DENSE_POOL_MAX_ROWS = 1 << 20
#: log2 of the sparse table's slots in use after a reset.
_INITIAL_BITS = 10
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
POOL = types.Tuple((INDEX, INDEX, types.Array(I8, 2, "C"), INDEX))


def new_pool(n, dense):
    """A pool over ``0..n-1`` for a chain's state: dense (the identity permutation) or
    sparse. Allocated by NumPy so that the sparse arrays are committed lazily by the
    operating system (the table is zero-filled on first touch, not here)."""
    if dense:
        return (np.arange(n, dtype=np.int64), np.zeros(0, dtype=np.int64),
                np.zeros((0, 3), dtype=np.int64), np.array([0, 0, 1], dtype=np.int64))
    return (np.empty(n, dtype=np.int64), np.zeros(_table_slots(n), dtype=np.int64),
            np.empty((n, 3), dtype=np.int64),
            np.array([0, _INITIAL_BITS, 0], dtype=np.int64))


@jit
def _table_slots(n):
    """The sparse table's slots: a power of two, at least 2 n (so the load stays <= 1/2)."""
    slots = 1 << _INITIAL_BITS
    while slots < 2 * n:
        slots <<= 1
    return slots


@jit
def make_pool(n, dense):
    """:func:`new_pool` inside a kernel (its sparse table is zero-filled at once: for the
    small data of one-off calls)."""
    if dense:
        return (np.arange(n), np.zeros(0, dtype=np.int64), np.zeros((0, 3), dtype=np.int64),
                np.array([0, 0, 1]))
    return (np.empty(n, dtype=np.int64), np.zeros(_table_slots(n), dtype=np.int64),
            np.empty((n, 3), dtype=np.int64), np.array([0, _INITIAL_BITS, 0]))


@jit(inline="always")
def _slot_of(position, bits):
    return np.int64((np.uint64(position) * _GOLDEN) >> np.uint64(64 - bits))


@jit
def _find(table, entries, bits, position):
    """``(row at position, entry index or -1)``."""
    mask = (1 << bits) - 1
    slot = _slot_of(position, bits)
    while True:
        e = table[slot]
        if e == 0:
            return position, -1
        if entries[e - 1, 0] == position:
            return entries[e - 1, 1], e - 1
        slot = (slot + 1) & mask


@jit
def _place(table, entries, bits, e):
    """Put entry ``e`` in the first free slot of its probe sequence."""
    mask = (1 << bits) - 1
    slot = _slot_of(entries[e, 0], bits)
    while table[slot] != 0:
        slot = (slot + 1) & mask
    table[slot] = e + 1
    entries[e, 2] = slot


@jit
def _store(table, entries, counters, position, row, e):
    """Set the virtual permutation's ``position`` to ``row`` (``e``: its entry, -1 if none)."""
    if e >= 0:
        entries[e, 1] = row
        return
    used = counters[0]
    bits = counters[1]
    if 2 * (used + 1) > (1 << bits) and (1 << bits) < table.shape[0]:
        for f in range(used):  # double the slots in use and re-place every entry
            table[entries[f, 2]] = 0
        bits += 1
        counters[1] = bits
        for f in range(used):
            _place(table, entries, bits, f)
    entries[used, 0] = position
    entries[used, 1] = row
    _place(table, entries, bits, used)
    counters[0] = used + 1


@jit
def draw_rows(pool, start, count, rng):
    """Extend the batch ``pool[0][:start]`` by ``count`` rows drawn uniformly from the others.
    ``start = 0`` begins a new batch (the sparse table is cleared first)."""
    rows, table, entries, counters = pool
    n = rows.shape[0]
    if counters[2] == 1:
        for j in range(start, start + count):
            # A uniform integer in [j, n) from one double: ``rng.integers`` costs ~100 ns in
            # numba, this ~5 ns; the non-uniformity is at most (n - j) / 2**53.
            k = min(j + int(rng.random() * (n - j)), n - 1)
            held = rows[j]
            rows[j] = rows[k]
            rows[k] = held
        return
    if start == 0:
        for e in range(counters[0]):
            table[entries[e, 2]] = 0
        counters[0] = 0
        counters[1] = _INITIAL_BITS
    for j in range(start, start + count):
        k = min(j + int(rng.random() * (n - j)), n - 1)
        row_j, _ = _find(table, entries, counters[1], j)
        if k == j:
            rows[j] = row_j
            continue
        row_k, entry_k = _find(table, entries, counters[1], k)
        rows[j] = row_k
        _store(table, entries, counters, k, row_j, entry_k)
