"""What ``fit`` reads: ``X`` and ``y`` validated without copies (NumPy, sparse, memory-mapped
or Dask arrays), in the layout and dtypes the kernels read, with the one pass's summary of
the data (classes, the columns' means and spreads)."""
import dataclasses

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import _check_sample_weight, check_array, validate_data

from .._dask import check_dask_data, encode_dask_labels, is_dask_array, scan_dask_data
from .._data import LinearData, kernel_csr
from .._passes import encode_labels, first_bad_row, scan_data
from .._validation import check_magnitudes, read_only

#: float32 ``X`` of at least this many bytes is read in place; smaller float32 data are
#: converted to float64 (a copy that costs nothing at that size, and its full-data passes
#: go through BLAS).
FLOAT32_IN_PLACE_MIN_BYTES = 1 << 26
#: A dense float64 ``X`` in memory is read as a CSR matrix (the same products without the
#: zeros: the same posterior) when at most this share of its values is non-zero, whatever
#: the model's outputs. ``benchmarks/perf/sparse_layout.py`` measured where a full-data pass
#: costs the same both ways (20,000 x 400): about 19% non-zero for one output (logistic,
#: Poisson, ...: BLAS is memory-bound there), 15% for five classes (four outputs in the
#: centred basis) and 21% for ten (nine), since a CSR row's stored values meet each
#: feature's ``K`` coefficients side by side (``_kernels/rows._matrix_pass``). Before, when
#: each output read the row again, ten classes crossed near 7% and the rule was
#: ``0.25 / sqrt(n_outputs)``.
AUTO_SPARSE_DENSITY = 0.2


def sparse_layout(data):
    """``data`` (:class:`~skbayes_mh._data.LinearData`, in memory: a memory map's rows stay
    where they are) with ``X`` as a CSR matrix (:func:`~skbayes_mh._data.kernel_csr`) when
    it is a dense float64 array with at most ``AUTO_SPARSE_DENSITY`` of its values
    non-zero; otherwise ``data``."""
    X = data.X
    if type(X) is not np.ndarray or X.dtype != np.float64 or X.size == 0:
        return data
    if np.count_nonzero(X) > AUTO_SPARSE_DENSITY * X.size:
        return data
    return dataclasses.replace(data, X=kernel_csr(sp.csr_array(X)))


def labels_dtype(X, dtype=np.float32):
    """The dtype the kernels read a model's ``y`` in beside ``X``: ``dtype`` (float32 when
    ``y`` is exactly that: class indices, or a float32 ``y``) where ``X`` is a float32
    array, so that a tall memory map's labels take 4 bytes a row (half of float64, a fifth
    of ten float32 features); float64 otherwise."""
    if not is_dask_array(X) and not sp.issparse(X) and X.dtype == np.float32:
        return dtype
    return np.float64


def fit_data(estimator, X, y, sample_weight=None, classes=False):
    """``X`` and ``y`` for ``estimator``'s ``fit`` (which sets its ``n_features_in_`` and
    ``feature_names_in_``), validated without copying them: float64 or float32
    ``X`` (a C-contiguous ``np.memmap`` included) is read where it is (float32 from
    :data:`FLOAT32_IN_PLACE_MIN_BYTES` up; below, a float64 copy), and one parallel
    pass finds the first row with NaN or infinity (an error naming it) and what ``fit``
    needs of ``y`` (see :func:`~skbayes_mh._passes.scan_data`).

    A ``dask.array`` ``X`` (with ``y`` a Dask or NumPy array) stays one: the pass runs
    as Dask tasks, one per row block (see ``skbayes_mh/_dask.py``).

    Returns
    -------
    X, y : the validated arrays (views of the input when it needs no conversion)
    weights : ndarray of shape (n_samples,) or (0,), float64, read-only
        ``sample_weight`` checked (finite, non-negative, not all zero); empty for None.
    summary : dict
        The columns' weighted means and sds (``x_mean``, ``x_std``), and ``classes``
        (with ``classes``) or the weighted ``mean`` and ``std`` of ``y`` and its
        ``min``.
    """
    distributed = is_dask_array(X)
    weights = np.zeros(0)
    if distributed:
        X, y = check_dask_data(X, y, classes)
        estimator.n_features_in_ = X.shape[1]
        if sample_weight is not None:  # one value a row, held here (a Dask one computed)
            weights = _check_sample_weight(np.asarray(sample_weight), _rows_only(X),
                                           dtype=np.float64, ensure_non_negative=True)
            if not np.any(weights):
                raise ValueError("Sample weights must contain at least one non-zero "
                                 "number.")
    else:
        try:
            X, y = validate_data(estimator, X, y, dtype=[np.float64, np.float32], order="C",
                                 accept_sparse=("csr", "csc"), ensure_all_finite=False,
                                 y_numeric=not classes)
        except ValueError as error:  # scikit-learn checks y itself: add the row
            values = np.asarray(y)
            if not (str(error).startswith("Input y contains") and values.ndim == 1
                    and values.dtype.kind == "f"):
                raise
            row = first_bad_row(values, 0, values.shape[0])
            raise ValueError(f"{str(error).rstrip('.')} (first in row {row}).") from None
        if not classes and y.dtype.kind not in "biuf":
            try:
                y = y.astype(np.float64)
            except (TypeError, ValueError):
                raise ValueError(f"y must be numeric for a regressor; got values of dtype "
                                 f"{y.dtype} such as {y[0]!r}.") from None
        if sample_weight is not None:
            weights = _check_sample_weight(sample_weight, X, dtype=np.float64,
                                           ensure_non_negative=True)
            if not np.any(weights):  # scikit-learn < 1.9 lets all-zero weights through
                raise ValueError("Sample weights must contain at least one non-zero "
                                 "number.")
    if sp.issparse(X):
        X = kernel_csr(X)
    elif X.dtype == np.float32 and X.nbytes < FLOAT32_IN_PLACE_MIN_BYTES:
        X = X.astype(np.float64)
    if distributed:
        summary = scan_dask_data(X, y, classes, weights if weights.size else None)
    else:
        try:
            summary = scan_data(X, y, classes, weights if weights.size else None)
        except TypeError:  # sorting the labels into classes_ compared a str with a number
            if not classes:
                raise
            kinds = sorted({type(label).__name__ for label in np.asarray(y).ravel()})
            raise TypeError(f"y mixes labels of types {kinds}, which cannot be sorted into "
                            f"classes_; give every label as one type (all strings or all "
                            f"numbers).") from None
    check_magnitudes(summary, classes)
    return X, y, read_only(weights), summary


def _rows_only(X):
    """An empty stand-in with ``X``'s rows (no columns, nothing computed), for scikit-learn's
    checks of a per-row array beside a ``dask.array`` ``X``."""
    return np.empty((X.shape[0], 0))


def exposure_offset(exposure, X):
    """``log(exposure)``, each row's offset in its linear predictors (float64, read-only),
    or None for None; an error names a row whose exposure is not positive and finite."""
    if exposure is None:
        return None
    if is_dask_array(exposure):  # one value a row: held here
        exposure = np.asarray(exposure)
    values = check_array(exposure, ensure_2d=False, dtype=np.float64,
                         ensure_all_finite=False, input_name="exposure")
    if values.ndim != 1 or values.shape[0] != X.shape[0]:
        raise ValueError(f"exposure must have shape ({X.shape[0]},), one value per row of "
                         f"X; got {values.shape}.")
    bad = np.flatnonzero(~(np.isfinite(values) & (values > 0)))
    if bad.size:
        raise ValueError(f"exposure must be positive and finite; row {bad[0]} has "
                         f"{float(values[bad[0]])!r} ({bad.size} such rows).")
    return read_only(np.log(values))


def class_indices(estimator, y, X):
    """``y`` as indices into ``classes_`` (``y`` itself when it already is), in the
    labels' dtype for ``X`` (:func:`labels_dtype`)."""
    if is_dask_array(y):
        return encode_dask_labels(y, estimator.classes_, np.float64)
    return encode_labels(y, estimator.classes_, labels_dtype(X))


def linear_data(X, y_model, weights, fit_intercept):
    """The data as the kernels read them: ``X`` where it is, ``y`` encoded (float32
    where ``X`` is a float32 array and ``y`` already float32, else float64), the
    sample weights (empty: none)."""
    if is_dask_array(X):
        return LinearData(X, y_model.astype(np.float64), weights,
                          bool(fit_intercept))
    if not sp.issparse(X):  # a sparse X is already as the kernels read it (_fit_data)
        X = read_only(np.ascontiguousarray(X))
    dtype = np.float32 if y_model.dtype == np.float32 else np.float64
    y_model = read_only(np.ascontiguousarray(y_model, dtype=labels_dtype(X, dtype)))
    return LinearData(X, y_model, weights, bool(fit_intercept))
