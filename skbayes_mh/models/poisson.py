"""Poisson regression with the log link: ``y_i ~ Poisson(exp(x_i . w + b))``.

Firefly has no use here: ``y eta - exp(eta)`` has no global quadratic lower bound in
``eta`` (the exponential outgrows every quadratic), so the model declares none and
``acceptance="firefly"`` is refused.
"""
import math

import numpy as np
from scipy.special import gammaln, pdtr

from .._kernels._jit import jit
from .._kernels.linear import link_rows_views
from ._base import LinearModel, LogLinkMean, mean_offset
from ._quantiles import discrete_mixture_quantiles


@jit
def poisson_link(u, y, params, order, d1, d2):
    """``y eta - exp(eta)`` (the log-pmf without ``-log y!``), ``eta = u[0]``; derivatives
    ``y - exp(eta)`` and ``-exp(eta)``."""
    eta = u[0]
    rate = math.exp(eta)
    if order >= 1:
        d1[0] = y - rate
        if order >= 2:
            d2[0, 0] = -rate
    return y * eta - rate


@jit
def poisson_link_rows(U, y, start, count, params, order, values, slopes, curvatures):
    """:func:`poisson_link` over a block of rows (``specs.LINK_ROWS``), calling it directly."""
    U, params, slopes, curvatures = link_rows_views(U, params, slopes, curvatures)
    last = curvatures.shape[0] - 1
    for r in range(count):
        hessian = curvatures[min(r, last)]
        values[r] = poisson_link(U[r], y[start + r], params, order, slopes[r], hessian)


class PoissonModel(LogLinkMean, LinearModel):
    """Poisson counts with a log link."""

    name = "Poisson"
    outcome = "counts"
    link = poisson_link
    link_rows = poisson_link_rows
    #: ``|d^3/d eta^3 (y eta - exp(eta))| = exp(eta)``.
    third_derivative = (1.0, 1.0)

    def initial_theta(self, data, prior):
        """Zero weights and the intercept at the log of the mean count (less the mean
        offset)."""
        theta = np.zeros(self.n_params(data))
        if data.intercept:
            mean = float(np.mean(data.y)) if data.n_rows else 1.0
            theta[data.block - 1] = math.log(max(mean, 1e-3)) - mean_offset(data)
        return theta

    def log_likelihood(self, eta, variables, y):
        """Poisson log mass of counts ``y`` at rate ``exp(eta)``."""
        return y[None, :] * eta[..., 0] - np.exp(eta[..., 0]) - gammaln(y + 1.0)[None, :]

    def simulate(self, eta, variables, rng):
        return rng.poisson(np.exp(eta[..., 0])).astype(np.float64)

    def mixture_quantiles(self, eta, variables, quantiles):
        return poisson_mixture_quantiles(np.exp(eta[..., 0]), quantiles)

    def noise_variance(self, eta, variables):
        """The rate."""
        return np.exp(eta[..., 0])


def poisson_mixture_quantiles(rate, quantiles):
    """Quantiles of the equal mixture over draws of Poisson(``rate``) (``rate`` of shape
    (n_draws, n_rows)): see :func:`~skbayes_mh.models._quantiles.discrete_mixture_quantiles`."""
    from scipy.stats import poisson

    return discrete_mixture_quantiles(lambda q, draws: poisson.ppf(q, rate[draws]),
                                      lambda k, rows: pdtr(k, rate[:, rows]), rate.shape[0],
                                      quantiles)
