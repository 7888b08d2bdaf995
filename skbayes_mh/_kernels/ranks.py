"""Average ranks from a sort order, for the diagnostics' rank normalisation
(``diagnostics.py``), which ranks every parameter's draws twice (the bulk's and the tails').

NumPy sorts; what NumPy does not do in one pass is give tied values the mean of their
ranks: done with whole-array operations (a cumulative sum over every row's tie groups, a
gather and a scatter) it took five times the sort's time, 17 ms of a block's 78 (32
parameters of 4 chains of 2,000 draws)."""
from numba import types

from ._entry import entry_kernel
from ._jit import F8, I8

_VALUES = types.Array(F8, 2, "C")
_ORDER = types.Array(I8, 2, "C")


@entry_kernel(types.void(_VALUES, _ORDER, _VALUES))
def average_ranks_in_order(values, order, out):
    """``out[r, j]``: the rank (1 to ``n``) of ``values[r, j]`` within row ``r``, tied values
    sharing the mean of their ranks; ``order[r]`` sorts row ``r`` (``np.argsort``). No NaN.

    Parameters
    ----------
    values : ndarray of shape (p, n)
    order : ndarray of shape (p, n), int64
    out : ndarray of shape (p, n)
    """
    n = values.shape[1]
    for row in range(values.shape[0]):
        start = 0
        while start < n:
            value = values[row, order[row, start]]
            end = start + 1
            while end < n and values[row, order[row, end]] == value:
                end += 1
            # Sorted positions start .. end - 1 hold ranks start + 1 .. end.
            rank = 0.5 * (start + 1 + end)
            for k in range(start, end):
                out[row, order[row, k]] = rank
            start = end
