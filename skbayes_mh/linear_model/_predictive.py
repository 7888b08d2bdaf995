"""Posterior-predictive means over as many stored draws as their Monte Carlo error needs.

A prediction is the mean over the stored draws ``s`` of ``f(eta_s)``, where ``eta_s = x
W_s' + b_s`` are a row's linear predictors (``n_outputs``) under draw ``s`` and ``f`` gives
class probabilities or a mean outcome. :func:`predictive_mean` estimates that all-draws
mean from evenly spaced draws of each chain, doubled until the estimate's standard error is
within a tolerance (at the latest, every draw: the all-draws mean itself), with a linear
control variate that makes a handful of draws enough where the posterior is narrow.

The control variate: with ``mu = x mean(W)' + mean(b)``, the all-draws mean of ``eta_s``,
and ``J`` the slope of ``f`` at ``mu`` (central differences), ``J (eta_s - mu)`` has an
all-draws mean of exactly zero. The estimate is the subset's mean of ``f(eta_s) - J (eta_s -
mu)``: unbiased for the all-draws mean over the draws a subset may pick, and with a spread
of the order of ``f''`` times the variance of ``eta`` instead of ``f'`` times its sd (on tall
data a few draws then carry an error far below 1e-4).
"""
import functools

import numpy as np
from scipy import stats

from .._passes import map_on_cores

#: Bytes of one block of test rows' linear predictors under every draw (rows x draws x
#: outputs, float64): it bounds the memory of the all-draws path, and blocks run on every
#: core.
PREDICT_BLOCK_BYTES = 1 << 24
#: Draws per chain of the first subset; each next subset doubles them. A row keeps the
#: estimate of a subset whose standard error and the previous (half-size) subset's are both
#: within the tolerance, so that one small subset that missed the tail of heavy-tailed values
#: (a count's mean far from the data) cannot end the row's search: at the earliest, rows
#: stop at the second subset (4 draws a chain).
FIRST_DRAWS_PER_CHAIN = 2
#: Step of the central differences that give ``f``'s slope at ``mu``, relative to
#: ``1 + |mu|`` (the differences' truncation and rounding errors are then about 1e-10; an
#: error in the slope costs the control variate some efficiency, never the mean its
#: unbiasedness).
SLOPE_STEP = 1e-5
#: A standard error estimated from ``m`` draws is held to ``tol`` times ``z / t_{m - 1}`` at
#: this two-sided level: the error its estimate makes with few draws (about 18% with 16)
#: does not let the error in the mean past the bound a known standard error would set.
ESTIMATE_LEVEL = 0.999


def linear_predictors(X, coef, intercept):
    """``X W_s' + b_s`` for every draw ``s``: ``(n_draws, n_rows, n_outputs)`` from ``X``
    (n_rows, n_features; an array or a sparse matrix), ``coef`` (n_draws, n_outputs,
    n_features) and ``intercept`` (n_draws, n_outputs), as one matrix product.

    The draws are contiguous in memory (strides: draws, then outputs, then rows), so that
    an element-wise transform keeps that layout and its mean over the draws reads
    contiguous values (several times faster than with the outputs innermost)."""
    return OutputMajorDraws(coef, intercept).linear_predictors(X)


class OutputMajorDraws:
    """Stored draws laid out output by output, for :meth:`linear_predictors`.

    Parameters
    ----------
    coef : ndarray of shape (n_draws, n_outputs, n_features)
    intercept : ndarray of shape (n_draws, n_outputs)
    """

    def __init__(self, coef, intercept):
        self.n_draws, self.n_outputs, n_features = coef.shape
        self.weights = np.ascontiguousarray(coef.transpose(1, 0, 2))
        self.intercepts = np.ascontiguousarray(intercept.T)

    def linear_predictors(self, X, draws=None):
        """The linear predictors of ``X``'s rows under the draws ``draws`` (flat indices;
        None: all), ``(len(draws), n_rows, n_outputs)`` with the draws contiguous."""
        weights, intercepts = self.weights, self.intercepts
        if draws is not None and draws.size < self.n_draws:
            weights, intercepts = weights[:, draws], intercepts[:, draws]
        n_outputs, n_draws, n_features = weights.shape
        eta = np.asarray(X @ weights.reshape(n_outputs * n_draws, n_features).T)
        eta = eta.reshape(X.shape[0], n_outputs, n_draws)
        eta += intercepts
        return eta.transpose(2, 0, 1)


def row_blocks(X, n_draws, n_outputs):
    """``X``'s rows in blocks whose linear predictors under ``n_draws`` draws of
    ``n_outputs`` outputs take about :data:`PREDICT_BLOCK_BYTES`."""
    rows = max(1, PREDICT_BLOCK_BYTES // (8 * n_draws * n_outputs))
    return [X[start:start + rows] for start in range(0, X.shape[0], rows)]


def evenly_spaced_draws(n_chains, n_draws, per_chain):
    """Flat (chain-major) indices of ``per_chain`` evenly spaced draws of each chain, the
    first and last included: every draw once ``per_chain >= n_draws``."""
    positions = np.unique(np.linspace(0, n_draws - 1, min(per_chain, n_draws)).round()
                          .astype(np.intp))
    return (np.arange(n_chains)[:, None] * n_draws + positions).ravel()


def predictive_mean(X, coef, intercept, transform, n_chains, tol, relative=False):
    """The mean over the stored draws of ``transform(eta, draws)`` for each row of ``X``,
    over as many evenly spaced draws as a standard error of at most ``tol`` needs, in blocks
    of rows on every core.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_rows, n_features)
        Validated rows.
    coef : ndarray of shape (n_chains * n_draws, n_outputs, n_features)
        Every stored draw's weights, chain-major.
    intercept : ndarray of shape (n_chains * n_draws, n_outputs)
        Every stored draw's intercepts.
    transform : callable
        ``transform(eta, draws)`` with ``eta`` of shape ``(len(draws), rows, n_outputs)``
        (the draws contiguous) and ``draws`` the flat indices of the draws ``eta`` belongs
        to (for parameters beyond the weights): each draw's values, ``(len(draws), rows,
        ...)``.
    n_chains : int
    tol : float or None
        The standard error allowed on each value (the largest over a row's values); None:
        every draw.
    relative : bool, default=False
        ``tol`` is relative to ``max(1, |value|)`` (means on any scale) instead of absolute
        (probabilities).

    Returns
    -------
    ndarray of shape (n_rows, ...)
        ``transform``'s values averaged: over every draw where ``tol`` is None or where a
        row's error needed them, within ``tol`` (one standard error) of that mean otherwise.
    """
    draws = OutputMajorDraws(coef, intercept)
    n_draws = draws.n_draws // n_chains
    first = n_draws if tol is None else min(FIRST_DRAWS_PER_CHAIN, n_draws)
    mean_coef, mean_intercept = coef.mean(axis=0), intercept.mean(axis=0)

    def block_mean(X_block):
        mu = np.asarray(X_block @ mean_coef.T) + mean_intercept
        slopes = None if first >= n_draws else _slopes(transform, mu)
        return _subset_mean(X_block, draws, transform, n_chains, first, tol, relative, mu,
                            slopes)

    # Blocks of rows sized for the first subset's draws and three doublings (the rows that
    # need more go on in sub-blocks), or for every draw.
    blocks = row_blocks(X, n_chains * first * (1 if tol is None else 8), draws.n_outputs)
    return np.concatenate(map_on_cores(block_mean, blocks))


def _slopes(transform, mu):
    """``transform``'s slope at ``mu`` (rows, n_outputs) along each output by central
    differences: ``(rows, ..., n_outputs)``."""
    step = SLOPE_STEP * (1.0 + np.abs(mu))
    first = np.zeros(1, dtype=np.intp)
    columns = []
    for k in range(mu.shape[1]):
        up, down = mu.copy(), mu.copy()
        up[:, k] += step[:, k]
        down[:, k] -= step[:, k]
        difference = transform(up[None], first)[0] - transform(down[None], first)[0]
        width = (2.0 * step[:, k]).reshape((-1,) + (1,) * (difference.ndim - 1))
        columns.append(difference / width)
    return np.stack(columns, axis=-1)


def _subset_mean(X, draws, transform, n_chains, per_chain, tol, relative, mu, slopes):
    """:func:`predictive_mean` for one block of rows, starting from ``per_chain`` draws a
    chain: rows whose error is within ``tol`` keep their estimate, the others go on with
    twice the draws (in sub-blocks of rows within :data:`PREDICT_BLOCK_BYTES`)."""
    n_draws = draws.n_draws // n_chains
    estimate = None
    active = np.arange(X.shape[0])
    passed = np.zeros(X.shape[0], dtype=bool)  # the previous subset's error was within
    while True:
        subset = evenly_spaced_draws(n_chains, n_draws, per_chain)
        done = []
        for rows in row_blocks(active, subset.size, draws.n_outputs):
            eta = draws.linear_predictors(X if rows.size == X.shape[0] else X[rows], subset)
            values = transform(eta, subset)
            if estimate is None:
                estimate = np.empty((X.shape[0],) + values.shape[2:])
            if subset.size == draws.n_draws:  # every draw: the all-draws mean itself
                estimate[rows] = values.mean(axis=0)
                done.append(rows)
                continue
            # The control variate J (eta_s - mu), subtracted in place: residuals. Read in
            # memory order, the draws last (contiguous): (rows, ..., draws).
            residuals = np.moveaxis(values, 0, -1)
            deviations = np.moveaxis(eta, 0, -1) - mu[rows][:, :, None]
            row_slopes = slopes[rows]
            for k in range(deviations.shape[1]):
                residuals -= row_slopes[..., k, None] * deviations[:, k].reshape(
                    (rows.size,) + (1,) * (residuals.ndim - 2) + (subset.size,))
            mean = residuals.mean(axis=-1)
            residuals -= mean[..., None]
            spread = np.sqrt(np.einsum("...s,...s->...", residuals, residuals)
                             * ((1.0 - subset.size / draws.n_draws)
                                / (subset.size * (subset.size - 1.0))))
            allowed = tol * _estimate_allowance(subset.size) * (
                np.maximum(1.0, np.abs(mean)) if relative else 1.0)
            within = (spread <= allowed).reshape(rows.size, -1).all(axis=1)
            stop = within & passed[rows]
            passed[rows] = within
            estimate[rows[stop]] = mean[stop]
            done.append(rows[stop])
        active = np.setdiff1d(active, np.concatenate(done), assume_unique=True)
        if active.size == 0:
            return estimate
        per_chain *= 2


@functools.lru_cache(maxsize=64)
def _estimate_allowance(n_draws):
    """``z / t_{n_draws - 1}`` at :data:`ESTIMATE_LEVEL`: below 1, near 1 with many draws."""
    upper = 0.5 + ESTIMATE_LEVEL / 2
    return stats.norm.ppf(upper) / stats.t.ppf(upper, n_draws - 1)
