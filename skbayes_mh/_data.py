"""The data a model reads, where they are: in memory (a NumPy array or a memory map) or in
a ``dask.array`` whose passes run as Dask tasks. Models, the sampling layer and the Dask
helpers all read this one container; it imports nothing of theirs."""
from dataclasses import dataclass
from functools import partial

import numpy as np
import scipy.sparse as sp

from ._dask import gather, is_dask_array, map_dask_parts, take_rows
from ._passes import add_parts, chunks, column_slices, map_stripes, sum_stripes
from ._validation import read_only


@dataclass
class LinearData:
    """The data a linear-predictor model reads, where they are (no copies).

    Attributes
    ----------
    X : ndarray of shape (N, D), float64 or float32, C-contiguous, read-only, or sparse matrix
        A sparse ``X`` is a CSR matrix of float64 values with int32 indices
        (:func:`kernel_csr`), read by the kernels through its stored values only.
    y : ndarray of shape (N,), the dtype of ``X``, read-only
    weights : ndarray of shape (N,) or (0,), float64, read-only
        Sample weights; empty for none.
    intercept : bool
    row_offset : int
        The row of the whole data set that is this one's row 0 (a part of it, e.g. a Dask
        block read on a worker); error messages name rows of the whole.
    offset : ndarray of shape (N,) or (0,), float64, read-only
        Each row's offset in its linear predictors (``log(exposure)`` for counts over an
        exposure); empty for none.

    ``X`` and ``y`` may also be ``dask.array`` arrays with the same row blocks: full-data
    passes (:meth:`map_parts`) then run as Dask tasks, one per block.
    """

    X: np.ndarray
    y: np.ndarray
    weights: np.ndarray
    intercept: bool
    row_offset: int = 0
    offset: np.ndarray = None

    def __post_init__(self):
        if self.offset is None:
            self.offset = _NO_VALUES

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
    def sparse(self):
        """Whether ``X`` is a sparse (CSR) matrix."""
        return sp.issparse(self.X)

    @property
    def row_cost(self):
        """Products a row's dot product with a parameter vector costs: its stored values
        (sparse) or the number of features."""
        return self.X.nnz / max(1, self.n_rows) if self.sparse else self.n_features

    @property
    def kernel_X(self):
        """``X`` as the kernels take it: a float64 array as it is, any other layout in one
        type (``specs.Matrix``): its kind, the float32 array or the sparse matrix's CSR
        arrays (the others empty), a float32 ``y`` beside a float32 ``X``, and its shape."""
        return kernel_matrix(self.X, self.y)

    @property
    def kernel_y(self):
        """``y`` as the kernels take it: float64 (a copy only where it is not), or empty
        where :attr:`kernel_X` holds it (a float32 ``y`` beside a float32 ``X``)."""
        if self.y.dtype == np.float64:
            return self.y
        if self.y.dtype == np.float32 and _dense32(self.X):
            return _NO_VALUES
        return read_only(np.ascontiguousarray(self.y, dtype=np.float64))

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

    def sum_parts(self, function):
        """:meth:`map_parts` whose results (tuples of numbers and arrays) are added up, in
        row order; on local data as they arrive, a few at a time
        (:func:`~skbayes_mh._passes.sum_stripes`)."""
        if self.distributed:
            total = None
            for part in map_dask_parts(function, self):
                total = add_parts(total, part)
            return total
        return sum_stripes(partial(function, self), self.n_rows)

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
        X = kernel_csr(X) if self.sparse else read_only(np.ascontiguousarray(X))
        return LinearData(X, read_only(np.ascontiguousarray(y)),
                          read_only(np.ascontiguousarray(weights, dtype=np.float64)),
                          self.intercept,
                          offset=read_only(self.offset[rows]) if self.offset.size else None)

    def max_row_norm(self):
        """``max_i |[x_i, 1]|`` (the 1 with an intercept), in one pass."""
        largest = max(self.map_parts(_largest_square_norm))
        return float(np.sqrt(largest + int(self.intercept)))

    def rows(self, start, stop):
        """Rows ``start..stop-1`` of ``X`` as float64: an array, or a CSR matrix (a view of
        this one's arrays)."""
        if self.sparse:
            return csr_rows(self.X, start, stop)
        return np.asarray(self.X[start:stop], dtype=np.float64)

    def design_sum(self, start, stop, values, out=None):
        """``sum_r values[r] [x_r, 1]`` over rows ``start..stop-1`` (the 1 with an intercept);
        ``values`` of shape (rows,) or (rows, m) gives (block,) or (block, m).

        With ``out`` (of that shape) the sum is added into it, a few columns at a time, so
        that no temporary of ``out``'s size is made (a low-rank Laplace's blocks of vectors
        are tens of MB on wide data)."""
        X = self.rows(start, stop)
        if out is None:
            total = np.asarray(X.T @ values)
            if self.intercept:
                total = np.concatenate([total, values.sum(axis=0)[None] if values.ndim > 1
                                        else [values.sum()]])
            return total
        n_features = X.shape[1]
        if values.ndim == 1:
            out[:n_features] += np.asarray(X.T @ values)
        else:
            for columns in column_slices(n_features, values.shape[1]):
                out[:n_features, columns] += np.asarray(X.T @ values[:, columns])
        if self.intercept:
            out[n_features] += values.sum(axis=0)
        return out

    def design_times(self, start, stop, coefficients):
        """``[x_r, 1] @ coefficients`` for rows ``start..stop-1`` (the 1 with an intercept):
        ``coefficients`` of shape (block, m) gives (rows, m)."""
        X = self.rows(start, stop)
        n_features = X.shape[1]
        product = np.asarray(X @ coefficients[:n_features])
        if self.intercept:
            product = product + coefficients[n_features]
        return product

    def design_gram(self, start, stop, values, diagonal=False):
        """``sum_r values[r] [x_r, 1] [x_r, 1]'`` (block, block), or its diagonal."""
        X = self.rows(start, stop)
        if diagonal:
            gram = np.asarray(squared(X).T @ values)
            return np.append(gram, values.sum()) if self.intercept else gram
        gram = X.T @ multiply(X, values[:, None])
        gram = gram.toarray() if sp.issparse(gram) else gram
        if not self.intercept:
            return gram
        side = np.asarray(X.T @ values)
        return np.block([[gram, side[:, None]], [side[None, :], np.array([[values.sum()]])]])


def _largest_square_norm(part, begin, end):
    """``max_i |x_i|^2`` over rows ``begin..end-1`` of ``part``."""
    largest = 0.0
    for start, stop in chunks(begin, end):
        X = part.rows(start, stop)
        largest = max(largest, float(np.max(sum_each_row(squared(X)))))
    return largest


def csr_rows(X, start, stop):
    """Rows ``start..stop-1`` of the CSR matrix ``X``: a CSR matrix that shares ``X``'s
    stored values and indices (scipy's row slicing copies them: a pass's chunk of 65,536
    rows of a bag of words is about 40 MB a thread)."""
    first, last = int(X.indptr[start]), int(X.indptr[stop])
    return _csr_sharing(X.data[first:last], X.indices[first:last],
                        X.indptr[start:stop + 1] - X.indptr[start], (stop - start, X.shape[1]),
                        X.has_canonical_format)


def _csr_sharing(data, indices, indptr, shape, canonical):
    """A CSR matrix holding these arrays themselves: an empty matrix given them, since
    scipy's constructor copies arrays that are views of much larger ones (its "prune")."""
    matrix = sp.csr_array(shape, dtype=np.float64)
    matrix.data, matrix.indices, matrix.indptr = data, indices, indptr
    matrix.has_canonical_format = canonical
    return matrix


def squared(X):
    """``X * X`` elementwise for an array or a CSR matrix (whose square shares its
    structure: one array of its values' squares, not scipy's general product)."""
    if not sp.issparse(X):
        return X * X
    if X.format != "csr":
        return X.multiply(X)
    return _csr_sharing(X.data * X.data, X.indices, X.indptr, X.shape, X.has_canonical_format)


def multiply(X, other):
    """``X * other`` elementwise (broadcast) for an array or a sparse matrix ``X`` (whose
    product stays sparse)."""
    return X.multiply(other) if sp.issparse(X) else X * other


def sum_each_row(X):
    """``X.sum(axis=1)`` as a 1-D array, for an array or a sparse matrix."""
    return np.asarray(X.sum(axis=1)).ravel()


_NO_ROWS32 = read_only(np.empty((0, 0), dtype=np.float32))
_NO_VALUES = read_only(np.empty(0))
_NO_INDICES = read_only(np.empty(0, dtype=np.int32))
_NO_LABELS32 = read_only(np.empty(0, dtype=np.float32))


def _dense32(X):
    """Whether ``X`` is a float32 array (the kernels' ``specs.Matrix`` of kind DENSE32)."""
    return not sp.issparse(X) and X.dtype == np.float32


def kernel_matrix(X, y=None):
    """A linear model's ``X`` as the kernels take it: a float64 array as it is, else
    ``(kind, dense32, data, indices, indptr, labels32, shape)`` (``specs.MATRIX_DATA``),
    the arrays of ``X``'s layout in their places and empty arrays in the others;
    ``labels32`` is ``y`` when both are float32 (then the spec's float64 ``y`` is empty)."""
    from ._kernels.specs import DENSE32, SPARSE

    shape = tuple(map(int, X.shape))
    if sp.issparse(X):
        return (SPARSE, _NO_ROWS32, X.data, X.indices, X.indptr, _NO_LABELS32, shape)
    if X.dtype == np.float32:
        labels = y if y is not None and y.dtype == np.float32 else _NO_LABELS32
        return (DENSE32, X, _NO_VALUES, _NO_INDICES, _NO_INDICES, labels, shape)
    return X


def csr_arrays(X):
    """A CSR matrix as the kernels take it: ``(data, indices, indptr, shape)``
    (``specs.CSR_MATRIX``)."""
    return X.data, X.indices, X.indptr, tuple(map(int, X.shape))


#: The largest stored-value count a sparse ``X`` may have (its indices are int32).
MAX_SPARSE_VALUES = np.iinfo(np.int32).max


def kernel_csr(X):
    """A sparse matrix as the kernels read it: a ``csr_array`` of float64 values with
    int32 indices, duplicates summed, read-only (the input's own arrays where they already
    are so; CSC and other formats are converted, which copies them).

    Raises
    ------
    ValueError
        More stored values than int32 indices address (:data:`MAX_SPARSE_VALUES`).
    """
    if X.nnz > MAX_SPARSE_VALUES:
        raise ValueError(f"X has {X.nnz:,} stored values; sparse matrices with more than "
                         f"{MAX_SPARSE_VALUES:,} are not supported (split the rows, e.g. with "
                         f"ConsensusMonteCarlo).")
    X = sp.csr_array(X)
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    data = np.asarray(X.data, dtype=np.float64)
    indices = np.asarray(X.indices, dtype=np.int32)
    indptr = np.asarray(X.indptr, dtype=np.int32)
    csr = sp.csr_array((data, indices, indptr), shape=X.shape, copy=False)
    # scipy may choose wider index arrays on construction: set the kernels' ones again.
    csr.data, csr.indices, csr.indptr = (read_only(data), read_only(indices),
                                         read_only(indptr))
    return csr
