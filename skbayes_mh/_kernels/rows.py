"""How every sampler reads the data: per-row log-likelihoods, their pairs at two points with
the control-variate proxy, and their gradients, for both kinds of model
(:mod:`.specs`). Each function is specialised at compile time on the kind of ``spec``; the
samplers call them without knowing which kind they serve. For a :data:`.specs.Model` (the
chain loops' one type for every model and layout) they call the model's ops through
function pointers (``layouts.py``), which run these same functions on the model's own spec.

Every value is the row's *weighted* log-likelihood ``w_i l_i`` (sample weights; ``w_i = 1``
without them). Tempering is left to the callers. All are inlined into their callers (see
``linear.py``).
"""
import math

import numpy as np
from numba import types
from numba.extending import overload

from ._common import borrow, borrow_read_only, keep_alive, prefetch_row, prefetch_values
from ._jit import STATUS_BAD_LOGLIK, STATUS_OK, jit
from .linear import add_gradient, block_width, linear_u, row_offset, sparse_row_dot
from .specs import SPARSE, FireflyModel, LinearSpec, Model, RowSpec


def _is(spec, cls):
    return isinstance(spec, types.NamedTuple) and spec.instance_class is cls


@jit(inline="always")
def row_weight(weights, i):
    """``w_i``, or 1 without sample weights (an empty array)."""
    return 1.0 if weights.shape[0] == 0 else weights[i]


def n_rows(spec):
    """N, the rows of the data."""


@overload(n_rows, inline="always")
def _n_rows(spec):
    if _is(spec, LinearSpec):
        return lambda spec: spec.X.shape[0]
    if _is(spec, RowSpec):
        return lambda spec: spec.data.shape[0]
    if _is(spec, Model) or _is(spec, FireflyModel):
        return lambda spec: spec.n_rows


def row_label(spec, i):
    """``y_i`` of a linear model's spec, as float64: from ``spec.y``, or, when that is empty,
    from its :data:`.specs.Matrix`'s float32 ``labels32``."""


@overload(row_label, inline="always")
def _row_label(spec, i):
    if isinstance(spec.types[0], types.Array):
        return lambda spec, i: spec.y[i]

    def impl(spec, i):
        if spec.y.shape[0] > 0:
            return spec.y[i]
        return np.float64(spec.X.labels32[i])
    return impl


def link_block(spec, U, first, count, order, values, slopes, curvatures):
    """``spec.link_rows`` over rows ``first..first+count-1`` (``U``'s first ``count``
    rows): their labels read in ``spec.y``, or copied from a :data:`.specs.Matrix`'s
    float32 ``labels32`` (``spec.y`` empty) into float64 scratch."""


@overload(link_block, inline="always")
def _link_block(spec, U, first, count, order, values, slopes, curvatures):
    if isinstance(spec.types[0], types.Array):
        def direct(spec, U, first, count, order, values, slopes, curvatures):
            spec.link_rows(U, spec.y, first, count, spec.params, order, values, slopes,
                           curvatures)
        return direct

    def impl(spec, U, first, count, order, values, slopes, curvatures):
        if spec.y.shape[0] > 0:
            spec.link_rows(U, spec.y, first, count, spec.params, order, values, slopes,
                           curvatures)
            return
        labels = np.empty(count)
        for r in range(count):
            labels[r] = spec.X.labels32[first + r]
        spec.link_rows(U, borrow_read_only(labels), 0, count, spec.params, order, values,
                       slopes, curvatures)
        keep_alive(labels)
    return impl


def prefetch(spec, i):
    """Start loading row ``i`` into cache (a hint; changes nothing)."""


@overload(prefetch, inline="always")
def _prefetch(spec, i):
    if isinstance(spec.types[0], types.Array):  # a dense row (X, or a user's data)
        if _is(spec, LinearSpec):
            return lambda spec, i: prefetch_row(spec.X, i)
        return lambda spec, i: prefetch_row(spec.data, i)
    if _is(spec, LinearSpec):  # a specs.Matrix
        def impl(spec, i):
            X = spec.X
            if X.kind == SPARSE:
                prefetch_values(X.data, X.indptr[i])
                prefetch_values(X.indices, X.indptr[i])
            else:
                prefetch_row(X.dense32, i)
        return impl

    def impl(spec, i):  # a sparse row: its values and column indices
        matrix = spec[0]
        prefetch_values(matrix.data, matrix.indptr[i])
        prefetch_values(matrix.indices, matrix.indptr[i])
    return impl


def make_workspace(spec, n_params):
    """Scratch arrays for the functions below, allocated once per kernel call."""


@overload(make_workspace, inline="always")
def _make_workspace(spec, n_params):
    if _is(spec, Model):
        def impl(spec, n_params):
            m = spec.work_size
            return (np.empty(m), np.empty(m), np.empty(m), np.empty(m), np.empty((m, m)))
        return impl
    if _is(spec, LinearSpec) or _is(spec, FireflyModel):
        def impl(spec, n_params):
            m = spec.n_outputs + spec.n_extra
            return (np.empty(m), np.empty(m), np.empty(m), np.empty(m), np.empty((m, m)))
        return impl
    if _is(spec, RowSpec):
        def impl(spec, n_params):
            return (np.empty(n_params), np.empty(n_params), np.empty(n_params),
                    np.empty(n_params), np.empty((n_params, n_params)))
        return impl


@jit(inline="always")
def row_loglik(spec, theta, i, work):
    """``w_i l_i(theta)`` of a user's row (:data:`.specs.RowSpec`; the user's NaN or +inf
    passes through for the caller to flag). A linear model's full-data passes read their
    rows a block at a time instead (:func:`data_pass`)."""
    return row_weight(spec.weights, i) * spec.loglik(theta, spec.data, i)


@jit(inline="always")
def row_loglik_gradient(spec, theta, i, gradient, work):
    """:func:`row_loglik`, adding ``w_i grad l_i(theta)`` into ``gradient``."""
    row_gradient = work[0]
    weight = row_weight(spec.weights, i)
    spec.gradient(theta, spec.data, i, row_gradient)
    for a in range(theta.shape[0]):
        gradient[a] += weight * row_gradient[a]
    return weight * spec.loglik(theta, spec.data, i)


#: Rows per block of a full-data pass through BLAS (:func:`data_pass`): two ``(block, K)``
#: buffers a pass, and matrix products large enough for BLAS to run at full speed.
BLAS_BLOCK_ROWS = 1024


#: Rows per call of a linear model's ``link_rows`` where a pass reads rows one by one
#: (sparse rows, the setup's derivative passes): enough to spread the call's cost, few
#: enough that the block's rows are still in cache when their gradients are added.
LINK_BLOCK_ROWS = 64


def data_pass(spec, theta, want_grad, gradient, work):
    """``(sum_i w_i l_i(theta), status)`` over every row, with ``want_grad`` its gradient
    added to ``gradient``; ``status`` flags the first row whose value is NaN or ``+inf``
    (``STATUS_BAD_LOGLIK``; the sum is then NaN). A row at ``-inf`` makes the sum ``-inf``.

    A linear model on float64 data computes its linear predictors ``X W'`` and gradient
    (as ``D' X``, ``D`` the rows' slopes in ``u``) as matrix products, :data:`BLAS_BLOCK_ROWS`
    rows at a time (about five times faster than row by row at 1,347 x 60 x 9), and the
    link over each block in one call of the model's ``link_rows`` (a pass over breast
    cancer's 569 x 30 took 34-40 us with a call per row, most of it the calls); float32
    data (read in place, large) and sparse data (by each row's stored values) a block of
    rows at a time (:func:`_matrix_pass`); a user's rows row by row."""


@overload(data_pass)
def _data_pass(spec, theta, want_grad, gradient, work):
    if _is(spec, Model):
        return lambda spec, theta, want_grad, gradient, work: spec.ops.data_pass(
            spec.layout, theta, want_grad, gradient, work)
    blas = (_is(spec, LinearSpec) and isinstance(spec.types[0], types.Array)
            and spec.types[0].dtype == types.float64)
    if blas:
        def impl(spec, theta, want_grad, gradient, work):
            X = spec.X
            n, n_features = X.shape
            K, width = spec.n_outputs, block_width(spec)
            m = K + spec.n_extra
            weights_t = np.empty((n_features, K))
            for k in range(K):
                for j in range(n_features):
                    weights_t[j, k] = theta[k * width + j]
            block = min(n, BLAS_BLOCK_ROWS)
            predictors = np.empty((block, K))
            block_u = np.empty((block, m))
            values = np.empty(block)
            block_d1 = np.empty((block, m))
            block_d2 = np.empty((1, m, m))  # order <= 1: untouched
            slopes = np.empty((block, K))
            # The gradient's product as D' X_block, (K, n_features), D's transpose (an
            # F-ordered view) on the left: as X_block' D it took half as long again (one
            # thread; 300 x 299 rows, 9 outputs: 118 against 72 us; 1,024 x 64, 9
            # outputs: 86 against 53; 1,024 x 100, one output: 22 against 16).
            block_gradient = np.empty((K, n_features))
            order = 1 if want_grad else 0
            total = 0.0
            for start in range(0, n, block):
                stop = min(n, start + block)
                rows = stop - start
                X_block = X[start:stop]
                np.dot(X_block, weights_t, predictors[:rows])
                for r in range(rows):
                    _block_row_u(spec, theta, predictors, r, start + r, block_u)
                spec.link_rows(block_u, spec.y, start, rows, spec.params, order, values,
                               block_d1, block_d2)
                for r in range(rows):
                    weight = row_weight(spec.weights, start + r)
                    value = weight * values[r]
                    if math.isnan(value) or value == math.inf:
                        return math.nan, STATUS_BAD_LOGLIK
                    total += value
                    if want_grad:
                        for k in range(K):
                            slopes[r, k] = weight * block_d1[r, k]
                        _add_offset_gradient(spec, weight, block_d1[r], gradient)
                if want_grad:
                    np.dot(slopes[:rows].T, X_block, block_gradient)
                    for k in range(K):
                        for j in range(n_features):
                            gradient[k * width + j] += block_gradient[k, j]
            return total, STATUS_OK
        return impl

    if _is(spec, LinearSpec):  # a specs.Matrix: CSR, or float32
        return lambda spec, theta, want_grad, gradient, work: _matrix_pass(
            spec, theta, want_grad, gradient)
    return lambda spec, theta, want_grad, gradient, work: _row_by_row_pass(
        spec, theta, want_grad, gradient, work)


@jit(inline="always")
def _row_by_row_pass(spec, theta, want_grad, gradient, work):
    """:func:`data_pass` over a user's rows, one at a time."""
    total = 0.0
    for i in range(n_rows(spec)):
        if want_grad:
            value = row_loglik_gradient(spec, theta, i, gradient, work)
        else:
            value = row_loglik(spec, theta, i, work)
        if math.isnan(value) or value == math.inf:
            return math.nan, STATUS_BAD_LOGLIK
        total += value
    return total, STATUS_OK


@jit(inline="always")
def _matrix_pass(spec, theta, want_grad, gradient):
    """:func:`data_pass` over a linear model's float32 or CSR rows, :data:`LINK_BLOCK_ROWS`
    at a time: each row read for its ``K`` dot products, the model's ``link_rows`` called
    once for the block, then, with ``want_grad``, the rows' gradients added while they are
    still in cache. A CSR row's stored values are read here directly: the per-row
    functions' branches on the layout and calls made a pass of MNIST 1 vs 7 (13,007 rows,
    1.4 million stored values) take about 4.7 ms against 3.7 (before the link was called
    a block at a time).

    With several outputs, sparse rows are read against the coefficients laid out a feature
    at a time (``by_feature[j, k]``, a copy of ``theta``'s; the gradient's likewise in
    ``feature_gradient``): a stored value then meets its ``K`` coefficients side by side in
    one contiguous read, where ``theta``'s layout puts them ``width`` apart and each output
    read the row again (all ten MNIST digits, 10,000 rows as CSR, nine outputs: a pass with
    its gradient 32.1 ms before, 16.1 ms now; by BLAS on the dense rows 17.3 ms)."""
    X = spec.X
    sparse = X.kind == SPARSE
    values, columns, row_starts = X.data, X.indices, X.indptr
    K, width = spec.n_outputs, block_width(spec)
    m = K + spec.n_extra
    by_features = sparse and K > 1
    n_laid = X.shape[1] if by_features else 0
    owners = (np.empty((LINK_BLOCK_ROWS, m)), np.empty(LINK_BLOCK_ROWS),
              np.empty((LINK_BLOCK_ROWS, m)), np.empty((1, m, m)), np.empty((n_laid, K)),
              np.zeros((n_laid if want_grad else 0, K)), np.empty(K))
    U, row_values, slopes, curvature = (borrow(owners[0]), borrow(owners[1]),
                                        borrow(owners[2]), borrow(owners[3]))
    by_feature, feature_gradient, weighted_slopes = (borrow(owners[4]), borrow(owners[5]),
                                                     borrow(owners[6]))
    for k in range(K if by_features else 0):
        for j in range(n_laid):
            by_feature[j, k] = theta[k * width + j]
    order = 1 if want_grad else 0
    total = 0.0
    for first in range(0, X.shape[0], LINK_BLOCK_ROWS):
        count = min(X.shape[0], first + LINK_BLOCK_ROWS) - first
        for r in range(count):
            if by_features:
                for k in range(K):
                    U[r, k] = 0.0
                for p in range(row_starts[first + r], row_starts[first + r + 1]):
                    stored, column = values[p], columns[p]
                    for k in range(K):
                        U[r, k] += stored * by_feature[column, k]
                _block_row_u(spec, theta, U, r, first + r, U)
            elif sparse:
                begin, end = row_starts[first + r], row_starts[first + r + 1]
                for k in range(K):
                    U[r, k] = sparse_row_dot(values, columns, begin, end, theta, k * width)
                _block_row_u(spec, theta, U, r, first + r, U)
            else:
                linear_u(spec, theta, first + r, U[r])
        link_block(spec, U, first, count, order, row_values, slopes, curvature)
        for r in range(count):
            i = first + r
            weight = row_weight(spec.weights, i)
            value = weight * row_values[r]
            if math.isnan(value) or value == math.inf:
                return math.nan, STATUS_BAD_LOGLIK
            total += value
            if want_grad and by_features:
                for k in range(K):
                    weighted_slopes[k] = weight * slopes[r, k]
                for p in range(row_starts[i], row_starts[i + 1]):
                    stored, column = values[p], columns[p]
                    for k in range(K):
                        feature_gradient[column, k] += stored * weighted_slopes[k]
                _add_offset_gradient(spec, weight, slopes[r], gradient)
            elif want_grad and sparse:
                begin, end = row_starts[i], row_starts[i + 1]
                for k in range(K):
                    scaled = weight * slopes[r, k]
                    for p in range(begin, end):
                        gradient[k * width + columns[p]] += scaled * values[p]
                _add_offset_gradient(spec, weight, slopes[r], gradient)
            elif want_grad:
                add_gradient(spec, i, slopes[r], weight, gradient)
    for k in range(K if by_features and want_grad else 0):
        for j in range(n_laid):
            gradient[k * width + j] += feature_gradient[j, k]
    keep_alive(owners)
    return total, STATUS_OK


@jit(inline="always")
def _block_row_u(spec, theta, predictors, r, i, block_u):
    """``block_u[r]``: the ``u`` of a block's row ``r`` (the data's row ``i``) from its dot
    products ``predictors[r]`` (``x_i . w_k``), with the offset, the intercepts and the
    extra parameters."""
    K, width = spec.n_outputs, block_width(spec)
    offset = row_offset(spec.offset, i)
    for k in range(K):
        eta = predictors[r, k] + offset
        if spec.intercept:
            eta += theta[k * width + width - 1]
        block_u[r, k] = eta
    start = K * width
    for e in range(spec.n_extra):
        block_u[r, K + e] = theta[start + e]


@jit(inline="always")
def _add_offset_gradient(spec, weight, d1, gradient):
    """Adds ``weight`` times the row's slopes ``d1`` to the gradient's intercepts and extra
    parameters (the coordinates that no feature multiplies)."""
    K, width = spec.n_outputs, block_width(spec)
    if spec.intercept:
        for k in range(K):
            gradient[k * width + width - 1] += weight * d1[k]
    for e in range(spec.n_extra):
        gradient[K * width + e] += weight * d1[K + e]


def row_terms(spec, theta, theta_prop, cv, i, work):
    """``(w_i l_i(theta'), w_i l_i(theta), w_i [q_i(theta') - q_i(theta)])`` for one of a
    user's rows (a :data:`.specs.RowSpec`): the pair a subsampling test needs, and with
    control variates (``cv.use``) the change of the row's second-order Taylor proxy ``q_i``
    around ``cv.center`` (0 without). A linear model's rows are read a block at a time
    (``subsample.linear_batch_values``)."""


@overload(row_terms, inline="always")
def _row_terms(spec, theta, theta_prop, cv, i, work):
    if _is(spec, RowSpec):
        def impl(spec, theta, theta_prop, cv, i, work):
            gradient, delta_prop, delta, _, hessian = work
            weight = row_weight(spec.weights, i)
            proxy = 0.0
            if cv.use:
                spec.gradient(cv.center, spec.data, i, gradient)
                spec.hessian(cv.center, spec.data, i, hessian)
                d = theta.shape[0]
                for a in range(d):
                    delta_prop[a] = theta_prop[a] - cv.center[a]
                    delta[a] = theta[a] - cv.center[a]
                for a in range(d):
                    proxy += gradient[a] * (theta_prop[a] - theta[a])
                    for b in range(d):
                        proxy += 0.5 * hessian[a, b] * (delta_prop[a] * delta_prop[b]
                                                        - delta[a] * delta[b])
            proposed = spec.loglik(theta_prop, spec.data, i)
            current = spec.loglik(theta, spec.data, i)
            return weight * proposed, weight * current, weight * proxy
        return impl


def spec_log_prior(spec, theta):
    """The model's own log-prior term: the user's ``log_prior`` (0 for linear models, whose
    priors are built in)."""


@overload(spec_log_prior, inline="always")
def _spec_log_prior(spec, theta):
    if _is(spec, LinearSpec) or _is(spec, FireflyModel):
        return lambda spec, theta: 0.0
    if _is(spec, RowSpec) or _is(spec, Model):
        return lambda spec, theta: spec.log_prior(theta)


@jit
def flat_log_prior(theta):
    """The improper flat prior: ``log p(theta) = 0``."""
    return 0.0


@jit
def no_gradient(theta, data, i, out):
    """Stands in for a user gradient that was not given (never called: the samplers refuse
    what would need it)."""
    out[:] = np.nan


@jit
def no_hessian(theta, data, i, out):
    """Stands in for a user Hessian that was not given (never called)."""
    out[:, :] = np.nan
