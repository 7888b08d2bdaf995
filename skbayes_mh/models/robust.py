"""Student-t linear regression: ``y_i = x_i . w + s t_nu`` noise.

Data rows are ``[x_i, y_i, nu]`` (an intercept is a column of ones in ``x``). Theta is
``[w, log s]`` when the scale is sampled, or ``w`` alone for unit scale: a fixed scale is
divided out of ``y`` and ``w`` beforehand (``y / s = x . (w / s) + t_nu``).
"""
import math

import numpy as np

from .._kernels._jit import F8, I8, VECTOR, DATA, jit
from .._kernels.priors import LOG_SCALE, log_prior_and_gradient
from .logistic import row_dot


@jit(F8(VECTOR, DATA, I8))
def student_t_loglik(theta, data, i):
    """``log p(y_i | x_i, w, s) = -log s - (nu + 1) / 2 log(1 + r^2 / (nu s^2))`` up to the
    Student-t normalising constant, with ``r = y_i - x_i . w``."""
    n_features = data.shape[1] - 2
    residual = data[i, n_features] - row_dot(data, i, theta[:n_features])
    nu = data[i, n_features + 1]
    log_scale = theta[n_features] if theta.shape[0] > n_features else 0.0
    z = residual * residual * math.exp(-2.0 * log_scale)
    return -log_scale - 0.5 * (nu + 1.0) * math.log1p(z / nu)


def student_t_lipschitz(design, nu):
    """Per-datum Lipschitz constant in ``w`` at unit scale: ``|d l / d w| = (nu + 1) |r| |x| /
    (nu + r^2) <= (nu + 1) / (2 sqrt(nu)) |x|``. With a sampled scale there is none (the
    slope grows without bound as ``s -> 0``)."""
    return float((nu + 1.0) / (2.0 * np.sqrt(nu))
                 * np.sqrt(np.max(np.einsum("ij,ij->i", design, design))))


def _negative_log_posterior(theta, design, y, nu, prior_kind, prior_scales, inv_temperature):
    n_features = design.shape[1]
    log_scale = theta[n_features] if theta.size > n_features else 0.0
    residual = y - design @ theta[:n_features]
    precision = np.exp(-2.0 * log_scale)
    z = residual**2 * precision
    weight = (nu + 1.0) / (nu + z)
    gradient = np.zeros_like(theta)
    # The built-in prior (value, and its gradient added into ``gradient``), negated below.
    value = -log_prior_and_gradient(prior_kind, prior_scales, theta, True, gradient)
    gradient = -gradient
    value += inv_temperature * (y.size * log_scale
                                + 0.5 * (nu + 1.0) * np.sum(np.log1p(z / nu)))
    gradient[:n_features] -= inv_temperature * design.T @ (weight * residual * precision)
    if theta.size > n_features:
        gradient[n_features] += inv_temperature * (y.size - np.sum(weight * z))
    return value, gradient


def student_t_map(design, y, nu, prior_kind, prior_scales, inv_temperature=1.0,
                  max_iter=1000, full=True):
    """The MAP of the tempered posterior (L-BFGS from least squares) and a Laplace-style
    covariance from the Fisher information at the MAP.

    The Student-t Hessian need not be positive definite away from the mode, so the
    covariance uses the expected information instead:
    ``(nu + 1) / (nu + 3) X' X / s^2`` for ``w``, ``2 N nu / (nu + 3)`` for ``log s`` (no
    cross term), plus the prior's curvature (Gaussian ``1 / scale^2``; Laplace, none, but
    ``1 / scale^2`` is added to keep the matrix well conditioned).

    Parameters
    ----------
    design : ndarray of shape (N, D)
    y : ndarray of shape (N,)
    nu : float
    prior_kind : int
        ``GAUSSIAN`` or ``LAPLACE``, with ``| LOG_SCALE`` when theta ends with ``log s``.
    prior_scales : ndarray of shape (d,)
        ``d = D + 1`` with a log scale (its entry is the exponential prior's mean).
    inv_temperature : float
    full : bool
        Return the full ``(d, d)`` covariance, else the variances.

    Returns
    -------
    theta_map : ndarray of shape (d,)
    laplace : ndarray of shape (d, d) or (d,)
    """
    from scipy.optimize import minimize

    n_data, n_features = design.shape
    sampled_scale = bool(prior_kind & LOG_SCALE)
    w0 = np.linalg.lstsq(design, y, rcond=None)[0] if n_data > n_features else \
        np.zeros(n_features)
    theta0 = w0
    if sampled_scale:
        spread = np.median(np.abs(y - design @ w0)) / 0.6745
        theta0 = np.append(w0, np.log(max(spread, 1e-3 * max(np.std(y), 1e-12), 1e-300)))
    result = minimize(_negative_log_posterior, theta0, jac=True, method="L-BFGS-B",
                      args=(design, y, nu, prior_kind, prior_scales, inv_temperature),
                      options={"maxiter": max_iter})
    theta = result.x
    precision = np.exp(-2.0 * theta[n_features]) if sampled_scale else 1.0
    fisher = inv_temperature * (nu + 1.0) / (nu + 3.0) * precision
    prior_precision = 1.0 / prior_scales[:n_features] ** 2
    if not full:
        variances = 1.0 / (fisher * np.einsum("ij,ij->j", design, design) + prior_precision)
        if sampled_scale:
            variances = np.append(variances, 1.0 / _log_scale_information(
                n_data, nu, inv_temperature, theta[n_features], prior_scales[n_features]))
        return theta, variances
    information = fisher * design.T @ design + np.diag(prior_precision)
    if sampled_scale:
        d = n_features + 1
        block = np.zeros((d, d))
        block[:n_features, :n_features] = information
        block[n_features, n_features] = _log_scale_information(
            n_data, nu, inv_temperature, theta[n_features], prior_scales[n_features])
        information = block
    return theta, np.linalg.inv(information)


def _log_scale_information(n_data, nu, inv_temperature, log_scale, prior_mean):
    return inv_temperature * 2.0 * n_data * nu / (nu + 3.0) + np.exp(log_scale) / prior_mean
