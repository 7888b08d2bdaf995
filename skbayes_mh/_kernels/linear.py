"""Linear-predictor models (:data:`.specs.LinearSpec`): the vector ``u`` a row's
likelihood sees, and gradients in theta from gradients in ``u``.

Theta holds ``K`` blocks of ``B = D + intercept`` coordinates (the weights of output ``k``,
its intercept last), then the ``E`` extra parameters; ``u = [x_i . w_k + b_k (k < K),
extra]``. The dot products allow reassociation so that LLVM vectorises them; that changes
only their rounding, never an acceptance decision's arithmetic.

Functions that take the model's ``spec`` are inlined (``inline="always"``) into their
callers: passing a tuple of arrays across a call costs numba a reference-count update per
array, which on the per-row path cost more than the arithmetic.
"""
import math

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, overload
from numba.np.arrayobj import make_array

from ._common import borrow
from ._jit import jit
from .specs import SPARSE

#: Fast-math flags on the dot products' multiplications and additions only.
REASSOCIATE = ("reassoc", "contract")


@intrinsic
def row_dot(typingctx, X, i, theta, start):
    """``sum_j X[i, j] theta[start + j]`` for a C-contiguous ``X`` (float64 or float32, summed
    in float64) and a C-contiguous ``theta`` (typing fails for any other), emitted inline
    wherever it is called, its multiplications and additions flagged as reassociable so that
    LLVM vectorises the loop.

    A jitted function with ``fastmath`` would vectorise too, but LLVM inlines it only at some
    call sites, and a call costs more than a short dot product; numba's own inlining drops
    the fast-math flags.
    """
    def codegen(context, builder, signature, args):
        matrix = make_array(signature.args[0])(context, builder, value=args[0])
        vector = make_array(signature.args[2])(context, builder, value=args[2])
        double = ir.DoubleType()
        n_columns = builder.extract_value(matrix.shape, 1)
        row_start = builder.mul(args[1], n_columns)
        total = cgutils.alloca_once_value(builder, ir.Constant(double, 0.0))
        with cgutils.for_range(builder, n_columns) as loop:
            j = loop.index
            x = builder.load(builder.gep(matrix.data, [builder.add(row_start, j)]))
            if x.type != double:
                x = builder.fpext(x, double)
            t = builder.load(builder.gep(vector.data, [builder.add(args[3], j)]))
            product = builder.fmul(x, t, flags=REASSOCIATE)
            builder.store(builder.fadd(builder.load(total), product, flags=REASSOCIATE), total)
        return builder.load(total)
    if not (isinstance(X, types.Array) and X.layout == "C" and X.ndim == 2
            and isinstance(theta, types.Array) and theta.layout == "C"):
        return None
    return types.float64(X, types.intp, theta, types.intp), codegen


def x_dot(X, i, theta, start):
    """``sum_j X[i, j] theta[start + j]`` for a float64 array ``X`` (:func:`row_dot`) or a
    :data:`.specs.Matrix`: float32, or sparse (over row ``i``'s stored values only)."""


@overload(x_dot, inline="always")
def _x_dot(X, i, theta, start):
    if isinstance(X, types.Array):
        return lambda X, i, theta, start: row_dot(X, i, theta, start)

    def impl(X, i, theta, start):
        if X.kind == SPARSE:
            return sparse_row_dot(X.data, X.indices, X.indptr[i], X.indptr[i + 1], theta,
                                  start)
        return row_dot(X.dense32, i, theta, start)
    return impl


@jit
def sparse_row_dot(values, columns, begin, end, theta, start):
    """``sum_p values[p] theta[start + columns[p]]`` over ``p`` in ``begin..end-1`` (a
    function of its own, not inlined by numba: its arrays are borrowed, so a call costs no
    reference counting).

    Four running sums, not one: the reads of ``theta`` are scattered, so LLVM does not
    vectorise the loop, and one sum waits for each addition before the next (MNIST 1 vs
    7's pixels as CSR: 1.02 ns a stored value against 1.14). Like the dense dot products',
    only the rounding changes."""
    total0 = 0.0
    total1 = 0.0
    total2 = 0.0
    total3 = 0.0
    p = begin
    while p + 4 <= end:
        total0 += values[p] * theta[start + columns[p]]
        total1 += values[p + 1] * theta[start + columns[p + 1]]
        total2 += values[p + 2] * theta[start + columns[p + 2]]
        total3 += values[p + 3] * theta[start + columns[p + 3]]
        p += 4
    while p < end:
        total0 += values[p] * theta[start + columns[p]]
        p += 1
    return (total0 + total1) + (total2 + total3)


def add_row(X, i, scale, out, start):
    """``out[start + j] += scale * X[i, j]`` for every column ``j`` of a float64 array or a
    :data:`.specs.Matrix` ``X`` (a sparse row's stored values only)."""


@overload(add_row, inline="always")
def _add_row(X, i, scale, out, start):
    if isinstance(X, types.Array):
        def impl(X, i, scale, out, start):
            for j in range(X.shape[1]):
                out[start + j] += scale * X[i, j]
        return impl

    def impl(X, i, scale, out, start):
        if X.kind == SPARSE:
            for p in range(X.indptr[i], X.indptr[i + 1]):
                out[start + X.indices[p]] += scale * X.data[p]
        else:
            for j in range(X.shape[1]):
                out[start + j] += scale * X.dense32[i, j]
    return impl


@jit(inline="always")
def block_width(spec):
    """``B``: coordinates per output block (the weights, and the intercept when there is one)."""
    return spec.X.shape[1] + spec.intercept


@jit(inline="always")
def row_offset(offset, i):
    """Row ``i``'s offset in its linear predictors: ``offset[i]``, or 0 where there is none
    (``offset`` empty)."""
    return offset[i] if offset.shape[0] > 0 else 0.0


@jit(inline="always")
def set_extra(spec, theta, u):
    """``u[K:]``: the extra parameters, as they are in ``theta``."""
    start = spec.n_outputs * block_width(spec)
    for e in range(spec.n_extra):
        u[spec.n_outputs + e] = theta[start + e]


@jit(inline="always")
def linear_u(spec, theta, i, u):
    """``u`` of row ``i`` at ``theta``."""
    width = block_width(spec)
    n_features = spec.X.shape[1]
    offset = row_offset(spec.offset, i)
    for k in range(spec.n_outputs):
        base = k * width
        eta = x_dot(spec.X, i, theta, base) + offset
        if spec.intercept:
            eta += theta[base + n_features]
        u[k] = eta
    set_extra(spec, theta, u)


@jit(inline="always")
def linear_u_pair(spec, theta, theta_prop, i, u, u_prop):
    """``u`` of row ``i`` at ``theta`` and ``theta_prop``, reading the row once."""
    width = block_width(spec)
    n_features = spec.X.shape[1]
    offset = row_offset(spec.offset, i)
    for k in range(spec.n_outputs):
        base = k * width
        a = x_dot(spec.X, i, theta, base) + offset
        b = x_dot(spec.X, i, theta_prop, base) + offset
        if spec.intercept:
            a += theta[base + n_features]
            b += theta_prop[base + n_features]
        u[k] = a
        u_prop[k] = b
    set_extra(spec, theta, u)
    set_extra(spec, theta_prop, u_prop)


@jit(inline="always")
def linear_u_triple(spec, theta, theta_prop, center, i, u, u_prop, u_center):
    """``u`` of row ``i`` at three points (the row is in cache after the first)."""
    linear_u_pair(spec, theta, theta_prop, i, u, u_prop)
    linear_u(spec, center, i, u_center)


@jit(inline="always")
def add_gradient(spec, i, slope, weight, gradient):
    """``gradient += weight * d/dtheta`` of a function of row ``i``'s ``u`` whose gradient in
    ``u`` is ``slope``: the outer product of the first ``K`` slopes with ``[x_i, 1]``, and
    the extra slopes as they are."""
    width = block_width(spec)
    n_features = spec.X.shape[1]
    for k in range(spec.n_outputs):
        scaled = weight * slope[k]
        base = k * width
        add_row(spec.X, i, scaled, gradient, base)
        if spec.intercept:
            gradient[base + n_features] += scaled
    start = spec.n_outputs * width
    for e in range(spec.n_extra):
        gradient[start + e] += weight * slope[spec.n_outputs + e]


@jit
def quadratic_change(d1, d2, u_prop, u, u_center):
    """``q(u') - q(u)`` for the quadratic ``q(v) = d1 . (v - c) + (v - c)' d2 (v - c) / 2``
    around ``c = u_center``."""
    m = u.shape[0]
    total = 0.0
    for a in range(m):
        da_prop = u_prop[a] - u_center[a]
        da = u[a] - u_center[a]
        total += d1[a] * (u_prop[a] - u[a])
        for b in range(m):
            db_prop = u_prop[b] - u_center[b]
            db = u[b] - u_center[b]
            total += 0.5 * d2[a, b] * (da_prop * db_prop - da * db)
    return total


@jit
def map_extra_derivatives(d1, d2, u_center, n_outputs, exp_coords, extra_start):
    """Turn the derivatives ``d1``, ``d2`` of a row's log-likelihood in ``u`` at
    ``u_center`` into derivatives in ``exp(u_a)`` for each extra entry ``a`` (``u``'s
    entries from ``n_outputs`` on; ``theta``'s from ``extra_start``) that ``exp_coords``
    marks: ``f' = l' / alpha``, ``f'' = (l'' - l') / alpha^2``, mixed ones ``/ alpha``
    (``alpha = exp(u_a)``)."""
    m = d1.shape[0]
    for a in range(n_outputs, m):
        if exp_coords[extra_start + a - n_outputs] == 0.0:
            continue
        value = math.exp(u_center[a])
        for b in range(m):
            d2[a, b] /= value
            d2[b, a] /= value
        d2[a, a] -= d1[a] / (value * value)
        d1[a] /= value


@jit
def map_extra_entries(u, n_outputs, exp_coords, extra_start):
    """``exp(u_a)`` in place of each extra entry ``u_a`` that ``exp_coords`` marks (``u``'s
    entries from ``n_outputs`` on; ``theta``'s from ``extra_start``): the coordinates in
    which :func:`quadratic_change` reads the proxies of :func:`map_extra_derivatives`."""
    for a in range(n_outputs, u.shape[0]):
        if exp_coords[extra_start + a - n_outputs] != 0.0:
            u[a] = math.exp(u[a])


@jit(inline="always")
def link_rows_views(U, params, slopes, curvatures):
    """For a model's ``link_rows`` (:data:`.specs.LINK_ROWS`): its arrays borrowed, so that
    the rows of ``U``, ``slopes`` and ``curvatures`` it hands the link cost no reference
    counting (which made a row cost twice its arithmetic)."""
    return borrow(U), borrow(params), borrow(slopes), borrow(curvatures)
