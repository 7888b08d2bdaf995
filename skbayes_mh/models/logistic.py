"""Binary logistic regression: ``p(y_i = 1 | x_i, w) = 1 / (1 + exp(-x_i . w))``.

Data rows are ``[x_i, y_i]`` with ``y_i`` in {0, 1}; an intercept is a column of ones in ``x``.
"""
from .._kernels._common import log_sigmoid
from .._kernels._jit import DATA, F8, I8, VECTOR, jit


@jit(F8(DATA, I8, VECTOR), fastmath={"reassoc", "contract"})
def row_dot(data, i, weights):
    """``data[i, :d] . weights`` with ``d = len(weights)``.

    Reassociation lets LLVM vectorise the sum (a sequential float reduction cannot be);
    it changes only the rounding of this dot product, not any acceptance arithmetic.
    """
    total = 0.0
    for k in range(weights.shape[0]):
        total += data[i, k] * weights[k]
    return total


@jit(F8(VECTOR, DATA, I8))
def logistic_loglik(theta, data, i):
    """``log p(y_i | x_i, theta) = y log S(z) + (1 - y) log S(-z)`` with ``z = x_i . theta``."""
    z = row_dot(data, i, theta)
    y = data[i, data.shape[1] - 1]
    return y * log_sigmoid(z) + (1.0 - y) * log_sigmoid(-z)


def logistic_map(design, y, prior_scales, inv_temperature=1.0, max_iter=500, full=True):
    """The MAP of the tempered posterior and the Laplace approximation's covariance.

    Minimises ``-[sum_i log p(y_i | x_i, w)] / K + sum_k w_k^2 / (2 s_k^2)`` with L-BFGS.

    Parameters
    ----------
    design : ndarray of shape (N, d)
    y : ndarray of shape (N,), 0/1
    prior_scales : ndarray of shape (d,)
        Gaussian prior standard deviations.
    inv_temperature : float

    Returns
    -------
    theta_map : ndarray of shape (d,)
    laplace : ndarray of shape (d, d) or (d,)
        With ``full``, the inverse Hessian ``H^-1`` at the MAP (the Laplace covariance);
        otherwise the variances ``1 / diag(H)`` (O(N d) instead of O(N d^2)).
    """
    import numpy as np
    from scipy.optimize import minimize
    from scipy.special import expit, log_expit

    precision = 1.0 / np.asarray(prior_scales, dtype=float) ** 2
    sign = 2.0 * y - 1.0

    def objective(w):
        z = design @ w
        value = -np.sum(log_expit(sign * z)) * inv_temperature + 0.5 * np.sum(precision * w * w)
        gradient = -(design.T @ (y - expit(z))) * inv_temperature + precision * w
        return value, gradient

    w0 = np.zeros(design.shape[1])
    result = minimize(objective, w0, jac=True, method="L-BFGS-B",
                      options={"maxiter": max_iter})
    theta = result.x
    p = expit(design @ theta)
    weights = p * (1 - p) * inv_temperature
    if not full:
        return theta, 1.0 / (weights @ (design * design) + precision)
    hessian = (design * weights[:, None]).T @ design + np.diag(precision)
    return theta, np.linalg.inv(hessian)


def logistic_lipschitz(design):
    """``max_i ||x_i||``: ``|l_i(a) - l_i(b)| <= |x_i . (a - b)| <= ||x_i|| ||a - b||`` because
    the log-sigmoid is 1-Lipschitz, for either label. Computed once, at fit."""
    import numpy as np

    return float(np.sqrt(np.max(np.einsum("ij,ij->i", design, design))))
