"""Per-row log-likelihoods written as a user of ``skbayes_mh.sample`` writes them, shared by the
benchmarks and the tests that run the papers' experiments through ``sample``."""
import math

import numba
import numpy as np


@numba.njit(cache=True, fastmath={"reassoc", "contract"})
def _row_dot(data, i, theta):
    """``data[i, :d] . theta``; reassociation lets LLVM vectorise the sum."""
    total = 0.0
    for k in range(theta.shape[0]):
        total += data[i, k] * theta[k]
    return total


@numba.njit(cache=True)
def _log_sigmoid(x):
    if x >= 0.0:
        return -math.log1p(math.exp(-x))
    return x - math.log1p(math.exp(x))


@numba.njit(cache=True)
def logistic_loglik(theta, data, i):
    """Logistic regression: row ``i`` is ``[x_i, y_i]`` with ``y_i`` in {0, 1}."""
    z = _row_dot(data, i, theta)
    y = data[i, data.shape[1] - 1]
    return y * _log_sigmoid(z) + (1.0 - y) * _log_sigmoid(-z)


def logistic_lipschitz(design):
    """``max_i ||x_i||``: ``|l_i(a) - l_i(b)| <= |x_i . (a - b)|`` because the log-sigmoid is
    1-Lipschitz, for either label."""
    return float(np.sqrt(np.max(np.einsum("ij,ij->i", design, design))))


@numba.njit(cache=True)
def logistic_gradient(theta, data, i, out):
    """Row ``i``'s gradient: ``(y_i - sigmoid(x_i . theta)) x_i``."""
    z = _row_dot(data, i, theta)
    residual = data[i, data.shape[1] - 1] - 1.0 / (1.0 + math.exp(-z))
    for k in range(theta.shape[0]):
        out[k] = residual * data[i, k]


@numba.njit(cache=True)
def logistic_hessian(theta, data, i, out):
    """Row ``i``'s Hessian: ``-s (1 - s) x_i x_i'`` with ``s = sigmoid(x_i . theta)``."""
    s = 1.0 / (1.0 + math.exp(-_row_dot(data, i, theta)))
    curvature = -s * (1.0 - s)
    for a in range(theta.shape[0]):
        for b in range(theta.shape[0]):
            out[a, b] = curvature * data[i, a] * data[i, b]
