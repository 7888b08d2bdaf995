"""Ordinal regression with a cumulative link: for ordered classes ``0 < 1 < ... < K - 1``,
``P(y_i <= k) = F(c_k - eta_i)`` with ``eta_i = x_i . w + b`` and increasing cut-points
``c_0 < c_1 < ... < c_{K-2}``, ``F`` the logistic function (cumulative logit, the
proportional-odds model) or the standard normal CDF (cumulative probit).

The cut-points are sampled as ``u = [eta, g_1, ..., g_{K-2}]``: ``c_0 = 0`` and ``c_j =
c_{j-1} + exp(g_j)`` (ordered by construction, every coordinate unconstrained); the
intercept ``b`` carries their location (one of the two must be fixed: a shift of both
leaves every probability unchanged), so it keeps the centred prior every estimator's
intercept has. The reported cut-points are ``c_j - b`` (``P(y <= k) = F(cutpoint_k - x .
w)``, statsmodels' ``OrderedModel`` and Stan's ``ordered_logistic``), with no intercept.

Each row's log-likelihood is ``log(F(a) - F(a'))`` with ``a = c_y - eta`` and ``a' =
c_{y-1} - eta`` (``F(a') = 0`` for the first class and ``F(a) = 1`` for the last), taken
in logs without cancellation: ``log F(a) + log(1 - exp(log F(a') - log F(a)))``, mirrored
to the upper tail (``F(-a') - F(-a)``) where ``a' > 0``. No Firefly bound is derived, so
``acceptance="firefly"`` is refused.
"""
import math

import numpy as np
from scipy.special import log_expit, log_ndtr, expit, ndtr

from .._kernels._common import log_expm1
from .._kernels._jit import jit
from .._kernels.linear import link_rows_views
from ._base import LinearModel
from .probit import log_ndtr_and_ratio

#: ``params[0]`` of the link: the cumulative distribution ``F``.
LOGIT, PROBIT = 0.0, 1.0
#: A log-gap between cut-points above this (a gap above 1e100; 115 sds of the log-gap's
#: prior) counts as outside the support, where only a diverging path goes: the link's
#: Hessian holds the gaps' squares, which overflow not far beyond.
LOG_MAX_GAP = math.log(1e100)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


@jit
def _log_one_minus_exp(x):
    """``log(1 - exp(x))`` for ``x < 0``, accurate near 0 and far below it."""
    if x > -0.6931471805599453:
        return math.log(-math.expm1(x))
    return math.log1p(-math.exp(x))


@jit
def _derivatives(r_a, r_b, slope_a, slope_b, has_upper, has_lower, order, k, m, d1, d2):
    """The link's gradient ``d1`` and Hessian ``d2`` in ``u`` from ``r = F'(a) / P``,
    ``r' = F'(a') / P`` and ``h(a)``, ``h(a')`` (``slope_a``, ``slope_b``; see
    :func:`cumulative_link`), with ``d1[1..k]`` holding the gaps ``exp(g_j)`` (0 beyond
    ``k``) on entry."""
    l_a, l_b = r_a, -r_b
    if order >= 2:
        l_aa = r_a * slope_a - r_a * r_a if has_upper else 0.0
        l_bb = -r_b * slope_b - r_b * r_b if has_lower else 0.0
        l_ab = r_a * r_b
        for p in range(m):
            along_a_p = -1.0 if p == 0 else d1[p]  # 0 beyond k
            along_b_p = -1.0 if p == 0 else (d1[p] if p < k else 0.0)
            for q in range(p, m):  # one triangle, mirrored: exactly symmetric
                along_a_q = -1.0 if q == 0 else d1[q]
                along_b_q = -1.0 if q == 0 else (d1[q] if q < k else 0.0)
                d2[p, q] = (l_aa * along_a_p * along_a_q + l_bb * along_b_p * along_b_q
                            + l_ab * (along_a_p * along_b_q + along_b_p * along_a_q))
                d2[q, p] = d2[p, q]
            if p > 0:  # the cut-points' own curvature in g_p
                d2[p, p] += l_a * along_a_p + l_b * along_b_p
    d1[0] = -(l_a + l_b)
    for j in range(1, m):
        d1[j] *= l_a + (l_b if j < k else 0.0)


@jit
def _logistic_pieces(s):
    """``(log S(s), log S(-s), S(s))`` of the logistic function from one ``exp(-|s|)``."""
    small = math.exp(-abs(s))
    log_one_plus = math.log1p(small)
    log_s = -log_one_plus - (0.0 if s >= 0.0 else -s)
    log_s_minus = -log_one_plus - (s if s >= 0.0 else 0.0)
    return log_s, log_s_minus, (1.0 / (1.0 + small) if s >= 0.0 else small / (1.0 + small))


@jit
def _logit_terms(a, b, gap, has_upper, has_lower, order, k, m, d1, d2):
    """:func:`cumulative_link` for the logit link, with fewer transcendental functions:
    ``F(a) - F(a') = expm1(a - a') F(a') F(-a)``, every term from ``exp(-|a|)`` and
    ``exp(-|a'|)``."""
    log_f_a, log_f_minus_a, f_a = _logistic_pieces(a) if has_upper else (0.0, 0.0, 0.0)
    log_f_b, log_f_minus_b, f_b = _logistic_pieces(b) if has_lower else (0.0, 0.0, 0.0)
    if has_upper and has_lower:
        log_p = log_expm1(gap) + log_f_b + log_f_minus_a
    elif has_upper:
        log_p = log_f_a
    else:
        log_p = log_f_minus_b
    if order >= 1:
        # F'(s) = F(s) F(-s)
        r_a = math.exp(log_f_a + log_f_minus_a - log_p) if has_upper else 0.0
        r_b = math.exp(log_f_b + log_f_minus_b - log_p) if has_lower else 0.0
        _derivatives(r_a, r_b, 1.0 - 2.0 * f_a, 1.0 - 2.0 * f_b, has_upper, has_lower, order,
                     k, m, d1, d2)
    return log_p


@jit
def _outside_support(order, d1, d2):
    """``-inf`` with zero derivatives: gaps beyond :data:`LOG_MAX_GAP`, or a class whose
    probability rounds to 0."""
    if order >= 1:
        d1[:] = 0.0
        if order >= 2:
            d2[:] = 0.0
    return -math.inf


@jit
def _probit_terms(a, b, has_upper, has_lower, order, k, m, d1, d2):
    """:func:`cumulative_link` for the probit link: ``Phi(a) - Phi(a')`` as the difference
    of the two ``log Phi`` on the side where both lie (``Phi(-a') - Phi(-a)`` where ``a' >
    0``), ``h(s) = -s``."""
    if has_upper and has_lower:
        if b > 0.0:  # both in the upper tail: Phi(-b) - Phi(-a), without cancellation
            top = log_ndtr_and_ratio(-b)[0]
            log_p = top + _log_one_minus_exp(log_ndtr_and_ratio(-a)[0] - top)
        else:
            top = log_ndtr_and_ratio(a)[0]
            log_p = top + _log_one_minus_exp(log_ndtr_and_ratio(b)[0] - top)
    elif has_upper:
        log_p = log_ndtr_and_ratio(a)[0]
    else:
        log_p = log_ndtr_and_ratio(-b)[0]
    if not log_p > -math.inf:  # both ends far in one tail (a diverging path): P rounds to 0
        return _outside_support(order, d1, d2)
    if order >= 1:  # log Phi'(s) = -s^2 / 2 - log sqrt(2 pi)
        r_a = math.exp(-0.5 * a * a - _LOG_SQRT_2PI - log_p) if has_upper else 0.0
        r_b = math.exp(-0.5 * b * b - _LOG_SQRT_2PI - log_p) if has_lower else 0.0
        _derivatives(r_a, r_b, -a, -b, has_upper, has_lower, order, k, m, d1, d2)
    return log_p


@jit
def cumulative_link(u, y, params, order, d1, d2):
    """``log P(y | u)`` (:func:`_cumulative_link`)."""
    return _cumulative_link(u, y, params, order, d1, d2)


@jit(inline="always")
def _cumulative_link(u, y, params, order, d1, d2):
    """``log P(y | u)`` for ``u = [eta, g_1, ..., g_{K-2}]`` (``K = len(u) + 1`` classes,
    ``y`` a class index), and its gradient and Hessian in ``u``.

    With ``a = c_y - eta`` and ``a' = c_{y-1} - eta``, ``L = log(F(a) - F(a'))`` has
    ``L_a = r``, ``L_a' = -r'`` (``r = F'(a) / P``, ``r' = F'(a') / P``), ``L_aa = r h(a) -
    r^2``, ``L_a'a' = -r' h(a') - r'^2``, ``L_aa' = r r'`` (``h = F'' / F'``). In ``u``:
    ``da / d eta = da' / d eta = -1``, ``da / dg_m = exp(g_m)`` for ``m <= y`` (``m <= y -
    1`` for ``a'``), and ``d^2 a / dg_m^2 = exp(g_m)`` there too."""
    kind = params[0]
    m = u.shape[0]
    k = int(y)
    eta = u[0]
    has_upper = k < m  # classes 0..K-2 have the cut-point c_k above them
    has_lower = k > 0
    # The cut-points c_{k-1} and c_k (c_0 = 0), from the gaps exp(g_j) of j <= k, which
    # d1 holds until the gradient replaces them (each exponential taken once).
    lower_cut = gap = 0.0
    for j in range(1, min(k + 1, m)):
        if not u[j] <= LOG_MAX_GAP:  # NaN too
            return _outside_support(order, d1, d2)
        step = math.exp(u[j])
        if j < k:
            lower_cut += step
        else:  # j == k: the gap below c_k
            gap = step
        if order >= 1:
            d1[j] = step
    upper_cut = lower_cut + gap
    if order >= 1:
        for j in range(max(k + 1, 1), m):
            d1[j] = 0.0
    a = upper_cut - eta
    b = lower_cut - eta
    if kind == LOGIT:
        return _logit_terms(a, b, gap, has_upper, has_lower, order, k, m, d1, d2)
    return _probit_terms(a, b, has_upper, has_lower, order, k, m, d1, d2)


@jit
def cumulative_link_rows(U, y, start, count, params, order, values, slopes, curvatures):
    """:func:`cumulative_link` over a block of rows (``specs.LINK_ROWS``), its body inlined
    in the loop (a call a row, with its arrays' views, cost as much as the link's
    arithmetic)."""
    U, params, slopes, curvatures = link_rows_views(U, params, slopes, curvatures)
    last = curvatures.shape[0] - 1
    for r in range(count):
        hessian = curvatures[min(r, last)]
        values[r] = _cumulative_link(U[r], y[start + r], params, order, slopes[r], hessian)


def cutpoints_from_coordinates(intercept, gaps):
    """The reported cut-points ``c_j - b`` ``(..., K - 1)`` from the intercept ``b``
    ``(...)`` and the log-gaps ``g`` ``(..., K - 2)``."""
    steps = np.exp(gaps)
    cuts = np.concatenate([np.zeros(steps.shape[:-1] + (1,)), np.cumsum(steps, axis=-1)],
                          axis=-1)
    return cuts - intercept[..., None]


class CumulativeModel(LinearModel):
    """Ordinal classes with a cumulative logit or probit link (see the module).

    Parameters
    ----------
    n_classes : int
        ``K``, at least 2.
    link : {"logit", "probit"}
    """

    name = "cumulative"
    outcome = "classes"
    link = cumulative_link
    link_rows = cumulative_link_rows

    def __init__(self, n_classes, link="logit"):
        super().__init__(1)
        self.n_classes = int(n_classes)
        self.link_name = link
        self.n_extra = self.n_classes - 2

    def params(self):
        return np.array([PROBIT if self.link_name == "probit" else LOGIT])

    def _log_cdf(self, s):
        return log_ndtr(s) if self.link_name == "probit" else log_expit(s)

    def _cdf(self, s):
        return ndtr(s) if self.link_name == "probit" else expit(s)

    # --- the parameter layout -------------------------------------------------------------

    def posterior_variables(self, draws, n_features, intercept):
        """``coef`` ``(..., D)``, ``intercept`` (zeros: the cut-points carry the location)
        and ``cutpoints`` ``(..., K - 1)``."""
        coef = draws[..., :n_features]
        b = draws[..., n_features]
        return {"coef": coef, "intercept": np.zeros(draws.shape[:-1]),
                "cutpoints": cutpoints_from_coordinates(b, draws[..., n_features + 1:])}

    def theta_draws(self, variables, intercept):
        cutpoints = variables["cutpoints"]
        b = -cutpoints[..., 0]
        gaps = np.log(np.diff(cutpoints, axis=-1))
        return np.concatenate([variables["coef"], b[..., None], gaps], axis=-1)

    def initial_theta(self, data, prior):
        """Zero weights, and cut-points at the logits (or probits) of the classes'
        cumulative shares."""
        theta = np.zeros(self.n_params(data))
        counts = np.bincount(np.asarray(data.y, dtype=np.int64), minlength=self.n_classes,
                             weights=data.weights if data.weights.size else None)
        shares = np.clip(np.cumsum(counts)[:-1] / max(counts.sum(), 1e-300), 1e-3, 1 - 1e-3)
        from scipy.special import logit, ndtri
        cuts = ndtri(shares) if self.link_name == "probit" else logit(shares)
        cuts = np.maximum.accumulate(cuts + np.arange(cuts.size) * 1e-3)
        theta[data.block - 1] = -cuts[0]
        theta[data.block:] = np.log(np.maximum(np.diff(cuts), 1e-3))
        return theta

    def u_variables(self, u):
        """The NumPy side's linear predictors ``(n, 1, 1)`` and variables at the kernels'
        ``u`` rows ``(n, K - 1)``: ``eta`` as it is and the cut-points from the log-gaps
        with the intercept 0 (only ``c_k - eta`` matters)."""
        return u[:, None, :1], {"cutpoints": cutpoints_from_coordinates(np.zeros(len(u)),
                                                                         u[:, 1:])}

    # --- the NumPy side -------------------------------------------------------------------

    def _cumulative(self, eta, variables):
        """``F(cutpoint_k - eta)`` ``(n_draws, n_rows, K - 1)``."""
        return self._cdf(variables["cutpoints"][:, None, :] - eta[..., :1])

    def class_probabilities(self, eta, variables):
        cumulative = self._cumulative(eta, variables)
        shape = cumulative.shape[:-1] + (1,)
        bounds = np.concatenate([np.zeros(shape), cumulative, np.ones(shape)], axis=-1)
        return np.maximum(np.diff(bounds, axis=-1), 0.0)

    def log_likelihood(self, eta, variables, y):
        """``log(F(a) - F(a'))`` of each row's class ``y``, in logs as the link takes it."""
        y = np.asarray(y, dtype=np.int64)
        cut = variables["cutpoints"]  # (n_draws, K - 1)
        padded = np.concatenate([np.full(cut.shape[:-1] + (1,), -np.inf), cut,
                                 np.full(cut.shape[:-1] + (1,), np.inf)], axis=-1)
        a = padded[:, y + 1] - eta[..., 0]
        b = padded[:, y] - eta[..., 0]
        with np.errstate(divide="ignore", invalid="ignore"):
            upper = np.where(b > 0, self._log_cdf(-b), self._log_cdf(a))
            lower = np.where(b > 0, self._log_cdf(-a), self._log_cdf(b))
            gap = lower - upper
            log_one_minus = np.where(gap > -np.log(2.0), np.log(-np.expm1(gap)),
                                     np.log1p(-np.exp(gap)))
        return upper + log_one_minus

    def simulate(self, eta, variables, rng):
        probabilities = self.class_probabilities(eta, variables)
        cumulative = np.cumsum(probabilities, axis=-1)
        draws = rng.random(cumulative.shape[:-1] + (1,))
        return np.minimum((draws > cumulative).sum(axis=-1), self.n_classes - 1)
