"""The data a model reads, where they are: in memory (a NumPy array or a memory map) or in
a ``dask.array`` whose passes run as Dask tasks. Models, the sampling layer and the Dask
helpers all read this one container; it imports nothing of theirs."""
from dataclasses import dataclass
from functools import partial

import numpy as np

from ._dask import gather, is_dask_array, map_dask_parts, take_rows
from ._passes import chunks, map_stripes
from ._validation import read_only


@dataclass
class LinearData:
    """The data a linear-predictor model reads, where they are (no copies).

    Attributes
    ----------
    X : ndarray of shape (N, D), float64 or float32, C-contiguous, read-only
    y : ndarray of shape (N,), the dtype of ``X``, read-only
    weights : ndarray of shape (N,) or (0,), float64, read-only
        Sample weights; empty for none.
    intercept : bool
    row_offset : int
        The row of the whole data set that is this one's row 0 (a part of it, e.g. a Dask
        block read on a worker); error messages name rows of the whole.

    ``X`` and ``y`` may also be ``dask.array`` arrays with the same row blocks: full-data
    passes (:meth:`map_parts`) then run as Dask tasks, one per block.
    """

    X: np.ndarray
    y: np.ndarray
    weights: np.ndarray
    intercept: bool
    row_offset: int = 0

    @property
    def n_rows(self):
        return self.X.shape[0]

    @property
    def n_features(self):
        return self.X.shape[1]

    @property
    def block(self):
        """Coordinates per output block: the weights and, with an intercept, the intercept."""
        return self.X.shape[1] + int(self.intercept)

    @property
    def distributed(self):
        """Whether the rows are in a ``dask.array`` (passes run as Dask tasks)."""
        return is_dask_array(self.X)

    def map_parts(self, function):
        """A full-data pass: ``function(part, start, stop)`` over contiguous row ranges of
        ``part`` (local data: this data set's stripes, on every core; Dask data: each row
        block, as a task on the worker holding it), the results in row order.

        ``function`` must read the data only through ``part`` (a Dask task ships it, and
        whatever it holds, to a worker) and add ``part.row_offset`` to the rows it names.
        """
        if self.distributed:
            return map_dask_parts(function, self)
        return map_stripes(partial(function, self), self.n_rows)

    def gathered(self):
        """This data set with its rows in this process's memory (itself when they are)."""
        return gather(self) if self.distributed else self

    def take(self, rows):
        """``X[rows]`` and ``y[rows]`` (``rows`` sorted) as arrays in memory."""
        return take_rows(self, rows) if self.distributed else (self.X[rows], self.y[rows])

    def subsample(self, n_rows, random_state=0):
        """``n_rows`` random rows (a copy, in their original order) whose weights are scaled
        by ``N / n_rows``, so that their log-likelihood estimates the full data's."""
        rng = np.random.default_rng(random_state)
        rows = np.sort(rng.choice(self.n_rows, size=n_rows, replace=False))
        scale = self.n_rows / n_rows
        weights = (self.weights[rows] if self.weights.size else np.ones(n_rows)) * scale
        X, y = self.take(rows)
        return LinearData(read_only(np.ascontiguousarray(X)),
                          read_only(np.ascontiguousarray(y)),
                          read_only(np.ascontiguousarray(weights, dtype=np.float64)),
                          self.intercept)

    def max_row_norm(self):
        """``max_i |[x_i, 1]|`` (the 1 with an intercept), in one pass."""
        largest = max(self.map_parts(_largest_square_norm))
        return float(np.sqrt(largest + int(self.intercept)))

    def design_sum(self, start, stop, values):
        """``sum_r values[r] [x_r, 1]`` over rows ``start..stop-1`` (the 1 with an intercept);
        ``values`` of shape (rows,) or (rows, m) gives (block,) or (block, m)."""
        X = np.asarray(self.X[start:stop], dtype=np.float64)
        total = X.T @ values
        if self.intercept:
            total = np.concatenate([total, values.sum(axis=0)[None] if values.ndim > 1
                                    else [values.sum()]])
        return total

    def design_gram(self, start, stop, values, diagonal=False):
        """``sum_r values[r] [x_r, 1] [x_r, 1]'`` (block, block), or its diagonal."""
        X = np.asarray(self.X[start:stop], dtype=np.float64)
        if diagonal:
            gram = (X * X).T @ values
            return np.append(gram, values.sum()) if self.intercept else gram
        gram = X.T @ (X * values[:, None])
        if not self.intercept:
            return gram
        side = X.T @ values
        return np.block([[gram, side[:, None]], [side[None, :], np.array([[values.sum()]])]])


def _largest_square_norm(part, begin, end):
    """``max_i |x_i|^2`` over rows ``begin..end-1`` of ``part``."""
    largest = 0.0
    for start, stop in chunks(begin, end):
        X = np.asarray(part.X[start:stop], dtype=np.float64)
        largest = max(largest, float(np.max(np.einsum("ij,ij->i", X, X))))
    return largest
