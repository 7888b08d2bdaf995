"""Full-data passes over a range of rows, for the MAP, the Laplace approximation and the
control variates' sums. Python drives them chunk by chunk (``models/_base.py``).

For a linear-predictor model the kernel returns each row's weighted log-likelihood and its
first and second derivatives in ``u``; the sums over ``x_i x_i'`` that turn those into a
gradient and Hessian in theta are left to BLAS. For a user's per-row model the kernel sums
the user's gradient and Hessian row by row.
"""
import math

import numpy as np
from numba import types

from ._entry import by_data_layout, by_row_data, entry_kernel
from ._jit import F8, I8, MATRIX, STATUS_BAD_GRADIENT, STATUS_BAD_LOGLIK, STATUS_OK, VECTOR
from ._common import borrow, keep_alive
from .linear import linear_u
from .rows import LINK_BLOCK_ROWS, link_block, row_weight
from .specs import IN_VECTOR, LINEAR_SPECS, ROW_SPECS
from .views import as_functions, linear_view, row_view

_D3 = types.Array(F8, 3, "C")


@entry_kernel(*[I8(spec, IN_VECTOR, I8, I8, I8, VECTOR, MATRIX, _D3) for spec in LINEAR_SPECS],
              select=by_data_layout, functions_as_addresses=True)
def linear_derivatives(spec, theta, start, stop, order, values, slopes, curvatures):
    """For rows ``start..stop-1``: ``values[r]`` = ``w_i l_i``, and for ``order`` >= 1
    (>= 2) ``slopes[r]`` (``curvatures[r]``) its gradient (Hessian) in ``u``, ``r = i - start``.
    Returns the status (``STATUS_BAD_LOGLIK`` at the first non-finite value)."""
    model = linear_view(as_functions(spec))
    m = model.n_outputs + model.n_extra
    # The rows' u a block at a time, and stand-ins for the derivatives ``order`` leaves out.
    owners = (np.empty((LINK_BLOCK_ROWS, m)), np.empty((1, m)), np.empty((1, m, m)))
    U = borrow(owners[0])
    for first in range(start, stop, LINK_BLOCK_ROWS):
        count = min(stop, first + LINK_BLOCK_ROWS) - first
        r0 = first - start
        for r in range(count):
            linear_u(model, theta, first + r, U[r])
        block_slopes = slopes[r0:] if order >= 1 else borrow(owners[1])
        block_curvatures = curvatures[r0:] if order >= 2 else borrow(owners[2])
        link_block(model, U, first, count, order, values[r0:], block_slopes,
                   block_curvatures)
        for r in range(r0, r0 + count):
            if not math.isfinite(values[r]):
                return STATUS_BAD_LOGLIK
            weight = row_weight(model.weights, start + r)
            values[r] *= weight
            if order >= 1:
                for a in range(m):
                    slopes[r, a] *= weight
            if order >= 2:
                for a in range(m):
                    for b in range(m):
                        curvatures[r, a, b] *= weight
    keep_alive(owners)
    return STATUS_OK


@entry_kernel(*[types.Tuple((F8, I8))(spec, VECTOR, I8, I8, I8, VECTOR, MATRIX)
                for spec in ROW_SPECS], select=by_row_data, functions_as_addresses=True)
def row_sums(spec, theta, start, stop, order, gradient, hessian):
    """``(sum w_i l_i, status)`` over rows ``start..stop-1``, adding the weighted gradients
    (``order`` >= 1) and Hessians (``order`` >= 2) of the user's per-row functions into
    ``gradient`` and ``hessian``."""
    model = row_view(as_functions(spec))
    d = theta.shape[0]
    theta = borrow(theta)
    owners = (np.empty(d), np.empty((d, d)))
    row_gradient = borrow(owners[0])
    row_hessian = borrow(owners[1])
    total = 0.0
    for i in range(start, stop):
        weight = row_weight(model.weights, i)
        value = model.loglik(theta, model.data, i)
        if math.isnan(value) or value == math.inf:
            return math.nan, STATUS_BAD_LOGLIK
        total += weight * value
        if order >= 1:
            model.gradient(theta, model.data, i, row_gradient)
            for a in range(d):
                if not math.isfinite(row_gradient[a]):
                    return math.nan, STATUS_BAD_GRADIENT
                gradient[a] += weight * row_gradient[a]
        if order >= 2:
            model.hessian(theta, model.data, i, row_hessian)
            for a in range(d):
                for b in range(d):
                    if not math.isfinite(row_hessian[a, b]):
                        return math.nan, STATUS_BAD_GRADIENT
                    hessian[a, b] += weight * row_hessian[a, b]
    keep_alive(owners)
    return total, STATUS_OK
