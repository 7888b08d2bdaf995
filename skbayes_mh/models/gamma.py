"""Gamma regression with the log link: ``y_i ~ Gamma(mean exp(x_i . w + b), dispersion
phi)``, ``Var y_i = phi mu_i^2`` (shape ``k = 1 / phi``, scale ``phi mu_i``), with
``v = log phi`` sampled (one extra parameter: ``u = [eta, v]``). statsmodels' ``GLM`` with
the ``Gamma`` family and log link fits the same model (its ``scale`` is ``phi``).

Firefly is refused: ``-k y exp(-eta)`` has no global quadratic lower bound in ``eta``.
"""
import math

import numpy as np
from scipy.special import gammainc, gammaln
from scipy.stats import gamma

from .._kernels._jit import jit
from .._kernels.linear import link_rows_views
from ._base import LinearModel, LogLinkMean
from ._polygamma import STIRLING_FROM, digamma, digamma_tail, stirling_tail, trigamma, trigamma_tail

#: ``log(2 pi) / 2``.
_HALF_LOG_TWO_PI = 0.5 * math.log(2.0 * math.pi)
#: Below this ``|log(y / mu)|`` the deviance term ``1 + x - e^x`` is its series (it would
#: cancel).
_SERIES_BELOW = 1e-2


@jit
def unit_deviance_term(x):
    """``1 + x - e^x`` (at most 0, 0 at ``x = 0``) for ``x = log(y / mu)``, accurate near 0."""
    if abs(x) < _SERIES_BELOW:
        return -x * x * (0.5 + x * (1.0 / 6 + x * (1.0 / 24 + x * (1.0 / 120 + x / 720))))
    return x - math.expm1(x)


@jit
def shape_log_terms(k):
    """``(k log k - lgamma(k) - k, log k - psi(k), k - k^2 psi'(k))``: the shape's terms of
    the Gamma log-density and its derivatives, from the Stirling series' tails where the
    functions' leading terms cancel (from :data:`STIRLING_FROM` on)."""
    if k < STIRLING_FROM:
        return (k * math.log(k) - math.lgamma(k) - k, math.log(k) - digamma(k),
                k - k * k * trigamma(k))
    return (0.5 * math.log(k) - _HALF_LOG_TWO_PI - stirling_tail(k),
            0.5 / k - digamma_tail(k), -0.5 - k * k * trigamma_tail(k))


@jit
def _zero_derivatives(order, d1, d2):
    if order >= 1:
        d1[:] = 0.0
        if order >= 2:
            d2[:] = 0.0


@jit
def gamma_link(u, y, params, order, d1, d2):
    """``log Gamma(y | mean mu = exp(eta), dispersion phi = exp(v))`` without ``-log y``,
    and its derivatives in ``(eta, v)``. With ``k = 1 / phi`` and ``x = log(y / mu)`` it is
    ``k log k - lgamma(k) + k (x - e^x)``, written as ``(k log k - lgamma(k) - k) + k (1 +
    x - e^x)`` so that neither part cancels as ``k`` grows or ``y`` nears ``mu``."""
    k = math.exp(-u[1])
    if not (0.0 < k < math.inf):  # a shape beyond every float
        _zero_derivatives(order, d1, d2)
        return -math.inf
    shape_term, log_k_minus_psi, curvature_term = shape_log_terms(k)
    return _link_from_shape_terms(u, y, k, shape_term, log_k_minus_psi, curvature_term, order,
                                  d1, d2)


@jit(inline="always")
def _link_from_shape_terms(u, y, k, shape_term, log_k_minus_psi, curvature_term, order, d1,
                           d2):
    """:func:`gamma_link` from the shape ``k = exp(-v)`` and its :func:`shape_log_terms`,
    which every row shares."""
    x = math.log(y) - u[0]
    if x > 700.0:  # a ratio y / mu beyond every float
        _zero_derivatives(order, d1, d2)
        return -math.inf
    deviance = unit_deviance_term(x)
    value = shape_term + k * deviance
    if order >= 1:
        ratio_minus_one = math.expm1(x)  # y / mu - 1
        d1[0] = k * ratio_minus_one
        d1[1] = -k * (log_k_minus_psi + deviance)
        if order >= 2:
            d2[0, 0] = -k * (ratio_minus_one + 1.0)
            d2[0, 1] = -d1[0]
            d2[1, 0] = -d1[0]
            d2[1, 1] = -d1[1] + curvature_term
    return value


@jit
def gamma_link_rows(U, y, start, count, params, order, values, slopes, curvatures):
    """:func:`gamma_link` over a block of rows (``specs.LINK_ROWS``), the shape's
    gamma-function terms computed once for the rows that share the dispersion (the same
    values, bit for bit, as each row's own)."""
    U, params, slopes, curvatures = link_rows_views(U, params, slopes, curvatures)
    last = curvatures.shape[0] - 1
    known_v = math.nan
    k = shape_term = log_k_minus_psi = curvature_term = math.nan
    for r in range(count):
        u = U[r]
        hessian = curvatures[min(r, last)]
        if u[1] != known_v:  # another dispersion (never within one call of a chain's passes)
            known_v = u[1]
            k = math.exp(-known_v)
            if 0.0 < k < math.inf:
                shape_term, log_k_minus_psi, curvature_term = shape_log_terms(k)
        if not (0.0 < k < math.inf):
            values[r] = gamma_link(u, y[start + r], params, order, slopes[r], hessian)
            continue
        values[r] = _link_from_shape_terms(u, y[start + r], k, shape_term, log_k_minus_psi,
                                           curvature_term, order, slopes[r], hessian)


#: The smallest dispersion the start takes from the outcomes' moments.
MIN_START_DISPERSION = 1e-3
#: Bisection steps of a mixture quantile, on the log scale: each halves the bracket, which
#: the components' own quantiles bound; they stop once it is below
#: :data:`QUANTILE_TOLERANCE` (relative), far below the quantile's Monte Carlo error.
QUANTILE_ITERATIONS = 60
QUANTILE_TOLERANCE = 1e-7


class GammaModel(LogLinkMean, LinearModel):
    """Positive real outcomes with a log link and a sampled dispersion (one extra
    parameter, its log)."""

    name = "Gamma"
    outcome = "positive"
    link = gamma_link
    link_rows = gamma_link_rows
    n_extra = 1

    def extra_parameters(self):
        """The dispersion ``phi`` (``Var y = phi mu^2``, shape ``1 / phi``), sampled as its
        log."""
        return (("dispersion", np.exp, np.log),)

    def initial_theta(self, data, prior):
        """Zero weights, the intercept at the log of the mean outcome and the dispersion at
        the outcomes' squared coefficient of variation (at least
        :data:`MIN_START_DISPERSION`)."""
        theta = np.zeros(self.n_params(data))
        y = np.asarray(data.y, dtype=np.float64)
        mean = float(np.mean(y)) if data.n_rows else 1.0
        if data.intercept:
            theta[data.block - 1] = math.log(mean)
        spread = float(np.var(y)) / mean**2 if data.n_rows else 1.0
        theta[-1] = math.log(max(spread, MIN_START_DISPERSION))
        return theta

    @staticmethod
    def _shape_and_scale(eta, variables):
        """The shape ``k = 1 / phi`` per draw ``(n_draws, 1)`` and the scale ``phi mu``,
        ``(n_draws, n_rows)``."""
        dispersion = variables["dispersion"][:, None]
        return 1.0 / dispersion, dispersion * np.exp(eta[..., 0])

    def log_likelihood(self, eta, variables, y):
        """The Gamma log density of ``y`` (SciPy's ``gamma.logpdf`` with shape ``k`` and
        scale ``phi mu``), in logs."""
        k = 1.0 / variables["dispersion"][:, None]
        log_y = np.log(y)[None, :]
        return (k * (np.log(k) + log_y - eta[..., 0]) - k * y[None, :] * np.exp(-eta[..., 0])
                - gammaln(k) - log_y)

    def simulate(self, eta, variables, rng):
        k, scale = self._shape_and_scale(eta, variables)
        return rng.gamma(np.broadcast_to(k, scale.shape), scale)

    def noise_variance(self, eta, variables):
        """``phi mu^2``."""
        mu = np.exp(eta[..., 0])
        return variables["dispersion"][:, None] * mu * mu

    def mixture_quantiles(self, eta, variables, quantiles):
        """Quantiles of the equal mixture over draws of each draw's Gamma, by bisection on
        the log scale between the smallest and largest of the draws' own quantiles (which
        bracket the mixture's)."""
        k, scale = self._shape_and_scale(eta, variables)
        columns = []
        for q in quantiles:
            own = np.log(gamma.ppf(q, k, scale=scale))
            low, high = own.min(axis=0), own.max(axis=0)
            for _ in range(QUANTILE_ITERATIONS):
                if np.all(high - low <= QUANTILE_TOLERANCE * np.maximum(1.0, np.abs(high))):
                    break
                middle = 0.5 * (low + high)
                below = gammainc(k, np.exp(middle)[None, :] / scale).mean(axis=0) < q
                low, high = np.where(below, middle, low), np.where(below, high, middle)
            columns.append(np.exp(0.5 * (low + high)))
        return np.stack(columns, axis=1)
