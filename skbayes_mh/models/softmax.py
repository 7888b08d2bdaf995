"""Multiclass softmax regression: ``p(y = k | x, W) = exp(w_k . x) / sum_j exp(w_j . x)``,
with theta the ``K x D`` weights flattened row-major."""
import math

import numpy as np
from scipy.optimize import minimize
from scipy.special import log_softmax, softmax

from .._kernels._jit import jit


@jit
def softmax_loglik(theta, data, i):
    """``log p(y_i | x_i, W)``; row ``i`` is ``[x_i (D), y_i]`` with the class index ``y_i``,
    and ``K = len(theta) / D``."""
    n_features = data.shape[1] - 1
    n_classes = theta.shape[0] // n_features
    top = -math.inf
    label = int(data[i, n_features])
    chosen = 0.0
    for k in range(n_classes):
        total = 0.0
        for j in range(n_features):
            total += data[i, j] * theta[k * n_features + j]
        if k == label:
            chosen = total
        top = max(top, total)
    normaliser = 0.0
    for k in range(n_classes):
        total = 0.0
        for j in range(n_features):
            total += data[i, j] * theta[k * n_features + j]
        normaliser += math.exp(total - top)
    return chosen - top - math.log(normaliser)


def softmax_map(design, y, n_classes, prior_scales, inv_temperature=1.0, max_iter=1000,
                full=True):
    """The MAP of the tempered posterior and the Laplace covariance.

    Parameters
    ----------
    design : ndarray of shape (N, D)
    y : ndarray of shape (N,)
        Class indices ``0..K-1``.
    n_classes : int
    prior_scales : ndarray of shape (K * D,)
        Gaussian prior standard deviations of the flattened weights.
    inv_temperature : float
    full : bool
        Return the full ``(K D, K D)`` inverse Hessian, else the variances ``1 / diag(H)``.

    Returns
    -------
    theta_map : ndarray of shape (K * D,)
    laplace : ndarray of shape (K * D, K * D) or (K * D,)
    """
    n_features = design.shape[1]
    precision = 1.0 / np.asarray(prior_scales, dtype=float) ** 2
    onehot = np.eye(n_classes)[y.astype(int)]

    def objective(w):
        scores = design @ w.reshape(n_classes, n_features).T
        value = -np.sum(log_softmax(scores, axis=1) * onehot) * inv_temperature
        value += 0.5 * np.sum(precision * w * w)
        gradient = -((onehot - softmax(scores, axis=1)).T @ design).ravel() * inv_temperature
        return value, gradient + precision * w

    result = minimize(objective, np.zeros(n_classes * n_features), jac=True,
                      method="L-BFGS-B", options={"maxiter": max_iter})
    theta = result.x
    p = softmax(design @ theta.reshape(n_classes, n_features).T, axis=1)
    if not full:
        diagonal = ((p * (1 - p)).T @ (design * design)).ravel() * inv_temperature
        return theta, 1.0 / (diagonal + precision)
    hessian = np.empty((n_classes * n_features, n_classes * n_features))
    for k in range(n_classes):
        for m in range(n_classes):
            weights = p[:, k] * ((k == m) - p[:, m]) * inv_temperature
            hessian[k * n_features:(k + 1) * n_features, m * n_features:(m + 1) * n_features] = \
                (design * weights[:, None]).T @ design
    hessian += np.diag(precision)
    return theta, np.linalg.inv(hessian)
