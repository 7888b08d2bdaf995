"""Negative-binomial regression with the log link: ``y_i ~ NB(mean exp(x_i . w + b),
dispersion alpha)``, ``Var y_i = mu_i + alpha mu_i^2``, with ``v = log alpha`` sampled (one
extra parameter: ``u = [eta, v]``).

In SciPy's terms ``y_i ~ nbinom(n=r, p=r / (r + mu_i))`` with ``r = 1 / alpha``. Like
Poisson regression it has no global quadratic lower bound in ``eta`` (the mean's exponential
outgrows every quadratic), so Firefly is refused.
"""
import math

import numpy as np
from scipy.special import betainc, gammaln
from scipy.stats import nbinom

from .._kernels._jit import jit
from .._kernels.linear import link_rows_views
from ._base import LinearModel, LogLinkMean, mean_offset
from ._polygamma import (STIRLING_FROM, digamma, digamma_tail, stirling_tail, trigamma,
                         trigamma_tail)
from ._quantiles import discrete_mixture_quantiles

#: Beyond this ``r / (y + 1)`` the differences take their limits' leading terms.
_HUGE_SIZE = 1e15
#: Outside ``(_TINY_SIZE, _HUGE_SIZE_LIMIT)`` the link is its limit: for ``alpha`` beyond
#: 1e150 every positive count has vanishing likelihood (the Exponential prior puts no mass
#: there), below 1e-300 the counts are Poisson.
_TINY_SIZE = 1e-150
_HUGE_SIZE_LIMIT = 1e300


@jit
def log_gamma_ratio(y, r):
    """``lgamma(y + r) - lgamma(r) - y log r``."""
    if r < STIRLING_FROM:
        return math.lgamma(y + r) - math.lgamma(r) - y * math.log(r)
    if r > _HUGE_SIZE * (y + 1.0):
        return 0.5 * y * (y - 1.0) / r
    z = r + y
    return (z - 0.5) * math.log1p(y / r) - y + stirling_tail(z) - stirling_tail(r)


@jit
def size_digamma_difference(y, r):
    """``r (psi(y + r) - psi(r))``."""
    if r < STIRLING_FROM:
        return r * (digamma(y + r) - digamma(r))
    if r > _HUGE_SIZE * (y + 1.0):
        return y - 0.5 * y * (y - 1.0) / r
    z = r + y
    return r * math.log1p(y / r) + 0.5 * y / z + r * (digamma_tail(z) - digamma_tail(r))


@jit
def size_trigamma_difference(y, r):
    """``r^2 (psi'(y + r) - psi'(r))``."""
    if r < STIRLING_FROM:
        return r * r * (trigamma(y + r) - trigamma(r))
    if r > _HUGE_SIZE * (y + 1.0):
        return -y
    z = r + y
    return (-y * r / z - 0.5 * y * (z + r) / (z * z)
            + r * r * (trigamma_tail(z) - trigamma_tail(r)))


@jit
def negative_binomial_link(u, y, params, order, d1, d2):
    """``log NB(y | mu = exp(eta), alpha = exp(v))`` without ``-log y!``, and its derivatives
    in ``(eta, v)``. Written in ``alpha mu`` and the ratios above, so that it stays finite
    and accurate as ``alpha -> 0`` (Poisson) or grows."""
    r = math.exp(-u[1])
    if not _TINY_SIZE < r < _HUGE_SIZE_LIMIT:  # alpha beyond 1e150 or below 1e-300: limits
        return _limit_link(u, y, order, d1, d2)
    log_ratio = log_gamma_ratio(y, r)
    r_dpsi = size_digamma_difference(y, r) if order >= 1 else 0.0
    r2_dpsi2 = size_trigamma_difference(y, r) if order >= 2 else 0.0
    return _link_from_count_terms(u, y, math.exp(u[1]), log_ratio, r_dpsi, r2_dpsi2, order,
                                  d1, d2)


@jit
def _limit_link(u, y, order, d1, d2):
    """The link where ``r = 1 / alpha`` is beyond every float's reach: zero likelihood for a
    positive count (alpha beyond 1e150), or the Poisson's (alpha below 1e-300)."""
    if math.exp(-u[1]) <= _TINY_SIZE:
        value = 0.0 if y == 0.0 else -math.inf
    else:  # Poisson
        value = y * u[0] - math.exp(u[0])
    if order >= 1:
        d1[:] = 0.0
        if order >= 2:
            d2[:] = 0.0
    return value


@jit(inline="always")
def _link_from_count_terms(u, y, alpha, log_ratio, r_dpsi, r2_dpsi2, order, d1, d2):
    """:func:`negative_binomial_link` from ``alpha = exp(v)`` and its count's gamma-function
    terms (:func:`log_gamma_ratio`, :func:`size_digamma_difference` and, for ``order`` 2,
    :func:`size_trigamma_difference` at ``y`` and ``r = exp(-v)``), which depend on the row
    only through its count."""
    eta = u[0]
    mu = math.exp(eta)
    am = alpha * mu
    if am == math.inf:  # a mean beyond every float (a diverging path): zero likelihood
        if order >= 1:
            d1[:] = 0.0
            if order >= 2:
                d2[:] = 0.0
        return -math.inf
    log_q = math.log1p(am)
    # log(1 + alpha mu) / alpha, with its series where the quotient would lose digits.
    log_q_over_alpha = log_q / alpha if am > 1e-8 else mu * (1.0 - am * (0.5 - am / 3.0))
    value = log_ratio + y * eta - y * log_q - log_q_over_alpha
    if order >= 1:
        q = 1.0 + am
        d1[0] = (y - mu) / q
        d1[1] = -r_dpsi + log_q_over_alpha + (y - mu) / q
        if order >= 2:
            # Quotients by q taken one at a time: q^2 overflows where they stay finite.
            cross = -(y - mu) / q * (am / q)
            d2[0, 0] = -(mu / q) * ((1.0 + alpha * y) / q)
            d2[0, 1] = cross
            d2[1, 0] = cross
            d2[1, 1] = r_dpsi + r2_dpsi2 + mu / q - log_q_over_alpha + cross
    return value


#: The smallest dispersion the start takes from the counts' moments (near-Poisson data).
MIN_START_DISPERSION = 0.01


#: Counts below this share their gamma-function terms within a call of
#: :func:`negative_binomial_link_rows`: each is computed once a call, where the rows share
#: ``alpha`` (lgamma and digamma were nine tenths of a row's cost at 11 distinct counts).
SHARED_TERM_COUNTS = 64


@jit
def negative_binomial_link_rows(U, y, start, count, params, order, values, slopes, curvatures):
    """:func:`negative_binomial_link` over a block of rows (``specs.LINK_ROWS``), each small
    count's gamma-function terms computed once for the rows that share it and ``alpha``
    (the same values, bit for bit, as each row's own)."""
    U, params, slopes, curvatures = link_rows_views(U, params, slopes, curvatures)
    last = curvatures.shape[0] - 1
    terms = np.empty((SHARED_TERM_COUNTS, 3))
    known = np.zeros(SHARED_TERM_COUNTS, dtype=np.bool_)
    known_v = math.nan
    r = alpha = math.nan
    for row in range(count):
        u = U[row]
        hessian = curvatures[min(row, last)]
        y_row = y[start + row]
        if u[1] != known_v:  # another alpha (never within one call of the chain's passes)
            known[:] = False
            known_v = u[1]
            r = math.exp(-known_v)
            alpha = math.exp(known_v)
        if not (_TINY_SIZE < r < _HUGE_SIZE_LIMIT and 0.0 <= y_row < SHARED_TERM_COUNTS
                and int(y_row) == y_row):
            values[row] = negative_binomial_link(u, y_row, params, order, slopes[row],
                                                 hessian)
            continue
        k = int(y_row)
        if not known[k]:
            terms[k, 0] = log_gamma_ratio(y_row, r)
            terms[k, 1] = size_digamma_difference(y_row, r) if order >= 1 else 0.0
            terms[k, 2] = size_trigamma_difference(y_row, r) if order >= 2 else 0.0
            known[k] = True
        values[row] = _link_from_count_terms(u, y_row, alpha, terms[k, 0], terms[k, 1],
                                             terms[k, 2], order, slopes[row], hessian)


class NegativeBinomialModel(LogLinkMean, LinearModel):
    """Negative-binomial counts with a log link and a sampled dispersion (one extra
    parameter, its log)."""

    name = "negative binomial"
    outcome = "counts"
    link = negative_binomial_link
    link_rows = negative_binomial_link_rows
    n_extra = 1
    #: Counts near the Poisson limit leave ``log alpha`` a long left tail (the prior's),
    #: along which each row's log-likelihood is nearly constant: quadratic proxies in
    #: ``alpha`` follow it, quadratic ones in ``log alpha`` cut it off (the paths of the
    #: subsampling tests' Hamiltonian proposal then hardly reach it); a well-determined
    #: dispersion keeps them in ``log alpha``.
    proxy_exp_extra = (True,)

    def extra_parameters(self):
        """The dispersion ``alpha`` (``Var y = mu + alpha mu^2``), sampled as its log."""
        return (("dispersion", np.exp, np.log),)

    def initial_theta(self, data, prior):
        """Zero weights, the intercept at the log of the mean count (less the mean offset),
        and the dispersion from the counts' first two moments (at least
        :data:`MIN_START_DISPERSION`)."""
        theta = np.zeros(self.n_params(data))
        y = np.asarray(data.y, dtype=np.float64)
        mean = max(float(np.mean(y)), 1e-3) if data.n_rows else 1.0
        if data.intercept:
            theta[data.block - 1] = math.log(mean) - mean_offset(data)
        excess = (float(np.var(y)) - mean) / mean**2 if data.n_rows else 1.0
        theta[-1] = math.log(max(excess, MIN_START_DISPERSION))
        return theta

    @staticmethod
    def _size_and_log_mean(eta, variables):
        """``r = 1 / alpha`` per draw ``(n_draws, 1)`` and ``log mu = eta``, ``(n_draws,
        n_rows)``."""
        return 1.0 / variables["dispersion"][:, None], eta[..., 0]

    def log_likelihood(self, eta, variables, y):
        """The negative-binomial log mass of counts ``y`` (SciPy's ``nbinom.logpmf`` with
        ``n = r``, ``p = r / (r + mu)``), in logs so that large means do not overflow."""
        r, log_mu = self._size_and_log_mean(eta, variables)
        log_total = np.logaddexp(np.log(r), log_mu)
        return (gammaln(y[None, :] + r) - gammaln(r) - gammaln(y + 1.0)[None, :]
                + r * (np.log(r) - log_total) + y[None, :] * (log_mu - log_total))

    def simulate(self, eta, variables, rng):
        r, log_mu = self._size_and_log_mean(eta, variables)
        r = np.broadcast_to(r, log_mu.shape)
        return rng.negative_binomial(r, r / (r + np.exp(log_mu))).astype(np.float64)

    def noise_variance(self, eta, variables):
        """``mu + alpha mu^2``."""
        mu = np.exp(eta[..., 0])
        return mu + variables["dispersion"][:, None] * mu * mu

    def mixture_quantiles(self, eta, variables, quantiles):
        r, log_mu = self._size_and_log_mean(eta, variables)
        p = r / (r + np.exp(log_mu))
        # The CDF at k is the regularised incomplete beta I_p(r, k + 1), for any real r.
        return discrete_mixture_quantiles(
            lambda q, draws: nbinom.ppf(q, r[draws], p[draws]),
            lambda k, rows: betainc(r, k + 1.0, p[:, rows]), p.shape[0], quantiles)
