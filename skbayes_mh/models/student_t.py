"""Linear regression with Student-t noise: ``y_i = x_i . w + b + s t_nu``.

With a sampled scale ``u = [eta, v]`` with ``v = log s``; with a fixed scale ``u = [eta]``
and ``v`` is the hyper-parameter ``params[1]``. Its Firefly bound is a Gaussian in the
residual (``log(1 + z)`` is concave, so its tangent lies above it).
"""
import math

import numpy as np
import scipy.sparse as sp
from scipy.special import gammaln, stdtr

from .._data import multiply
from .._kernels._jit import jit
from .._kernels.linear import link_rows_views
from .._passes import chunks
from ._base import LinearModel

#: Untuned Student-t bounds touch the likelihood where the residual is one scale.
UNTUNED_STANDARDISED_RESIDUAL = 1.0


@jit
def student_t_link(u, y, params, order, d1, d2):
    """``-v - (nu + 1) / 2 log(1 + r^2 exp(-2 v) / nu)`` with ``r = y - eta`` (the Student-t
    log density without its normalising constant), and its derivatives in ``(eta, v)``."""
    log_scale = u[1] if u.shape[0] > 1 else params[1]
    return _link_at_inverse_scale(u, y, params[0], log_scale, math.exp(-log_scale), order,
                                  d1, d2)


@jit(inline="always")
def _link_at_inverse_scale(u, y, nu, log_scale, inverse_scale, order, d1, d2):
    """:func:`student_t_link` from ``log_scale`` (``v``) and ``inverse_scale = exp(-v)``,
    which every row shares.

    The residual is standardised before it is squared, and the derivatives are formed from
    bounded quotients (``t / (nu + t^2)``, ``t`` the standardised residual) times powers
    of ``exp(-v)``: where a diverging path goes (a residual and a scale both beyond
    ``1e154``), ``r^2 exp(-2 v)`` would be ``inf x 0``, a NaN, where ``(r exp(-v))^2`` is
    the value's own."""
    sampled = u.shape[0] > 1
    residual = y - u[0]
    precision = inverse_scale * inverse_scale
    standardised = residual * inverse_scale
    z = standardised * standardised
    # A scale below 1e-154 (where a diverging path goes) counts as outside the support: no
    # posterior reaches there (fit refuses data the line fits exactly). So does a linear
    # predictor that overflowed (inf - inf in its sum: NaN) or an infinite residual
    # against an infinite scale.
    if precision == math.inf or math.isnan(z):
        if order >= 1:
            d1[:] = 0.0
            if order >= 2:
                d2[:] = 0.0
        return -math.inf
    spread = nu + z
    value = -log_scale - 0.5 * (nu + 1.0) * math.log1p(z / nu)
    if order >= 1:
        d1[0] = (nu + 1.0) * (standardised / spread) * inverse_scale
        if sampled:
            d1[1] = -1.0 + (nu + 1.0) * z / spread
        if order >= 2:
            # Divided by spread twice, never by its square: at a tiny scale (a diverging
            # path) the square overflows where each quotient stays finite.
            d2[0, 0] = (nu + 1.0) * (precision / spread) * ((z - nu) / spread)
            if sampled:
                cross = (-2.0 * nu * (nu + 1.0) * (standardised / spread)
                         * (inverse_scale / spread))
                d2[0, 1] = cross
                d2[1, 0] = cross
                d2[1, 1] = -2.0 * nu * (nu + 1.0) * (z / spread) / spread
    return value


@jit
def student_t_bound(u_tangent, y, params, bound_params, linear, curvature):
    """``l >= gamma - v - alpha r^2 exp(-2 v)`` with ``alpha = (nu + 1) / (2 nu (1 + u0))`` and
    ``gamma = -(nu + 1) / 2 (log(1 + u0) - u0 / (1 + u0))``: the tangent of ``log(1 + u)`` at
    ``u0 = r_t^2 exp(-2 v_t) / nu`` (the tangent parameters' standardised residual;
    ``bound_params[1]`` when untuned), tight wherever ``r^2 exp(-2 v) / nu = u0``. As a
    quadratic in ``eta`` (times ``exp(-2 v)``): ``c = -alpha y^2``, ``l = 2 alpha y``,
    ``A = 2 alpha``; unscaled ``c0 = gamma`` and ``s = 1``."""
    nu = params[0]
    if bound_params[0] > 0.0:
        log_scale = u_tangent[1] if u_tangent.shape[0] > 1 else params[1]
        residual = y - u_tangent[0]
        u0 = residual * residual * math.exp(-2.0 * log_scale) / nu
    else:
        u0 = bound_params[1]
    alpha = (nu + 1.0) / (2.0 * nu * (1.0 + u0))
    gamma = -0.5 * (nu + 1.0) * (math.log1p(u0) - u0 / (1.0 + u0))
    linear[0] = 2.0 * alpha * y
    curvature[0, 0] = 2.0 * alpha
    return -alpha * y * y, gamma, 1.0


#: Least-squares residuals (lightly ridged: 1e-8 relative) below this many sds of y count
#: as an exact fit (R^2 above 1 - 1e-12).
EXACT_FIT_TOLERANCE = 1e-6


def _normal_equations(part, begin, end):
    """``sum [x_i, 1] [x_i, 1]'`` and ``sum y_i [x_i, 1]`` over rows ``begin..end-1``."""
    gram = moment = 0.0
    for start, stop in chunks(begin, end):
        gram = gram + part.design_gram(start, stop, np.ones(stop - start))
        moment = moment + part.design_sum(start, stop,
                                          np.asarray(part.y[start:stop], dtype=float))
    return gram, moment


#: Rows (evenly spaced) of the robust start's reweighted least squares and scale.
ROBUST_START_ROWS = 20_000
#: Reweighting iterations toward least absolute deviations (each a weighted solve).
ROBUST_START_ITERATIONS = 30


def _least_absolute_deviations(design, y, coef, ridge):
    """Iteratively reweighted least squares toward the least-absolute-deviations fit from
    ``coef``: weights ``1 / max(|r|, floor)``. Returns the coefficients and residuals."""
    residual = y - design @ coef
    for _ in range(ROBUST_START_ITERATIONS):
        scale = np.median(np.abs(residual))
        # Where more than half the rows are fitted exactly the median is 0: the floor then
        # follows the largest residual, so that no weight overflows the normal equations.
        floor = max(1e-6 * scale, 1e-12 * float(np.max(np.abs(residual), initial=0.0)),
                    1e-300)
        weight = 1.0 / np.maximum(np.abs(residual), floor)
        gram = multiply(design, weight[:, None]).T @ design
        gram = gram.toarray() if sp.issparse(gram) else gram
        weighted_ridge = max(ridge, 1e-12 * np.trace(gram) / design.shape[1])
        try:
            step = np.linalg.solve(gram + weighted_ridge * np.eye(design.shape[1]),
                                   design.T @ (weight * y))
        except np.linalg.LinAlgError:  # rounding left it singular: keep the last fit
            break
        if not np.all(np.isfinite(step)):
            break
        converged = np.allclose(step, coef, rtol=1e-8, atol=1e-12 * max(scale, 1e-300))
        coef = step
        residual = y - design @ coef
        if converged:
            break
    return coef, residual


#: Least trimmed squares (the high-breakdown start): at most this many columns (each
#: elemental subset is that many rows) ...
HIGH_BREAKDOWN_MAX_COLUMNS = 100
#: ... this many random elemental subsets, each improved by two concentration steps, on up
#: to ``HIGH_BREAKDOWN_ROWS`` evenly spaced rows of the start's rows; the best then
#: concentrated to convergence on all of them.
HIGH_BREAKDOWN_SUBSETS = 100
HIGH_BREAKDOWN_ROWS = 2_000
HIGH_BREAKDOWN_STEPS = 30


def _trimmed_fit(design, y, coef, h, steps):
    """Concentration steps (Rousseeuw and Van Driessen 2006): least squares on the ``h``
    rows of smallest squared residual under ``coef``, ``steps`` times or until the rows no
    longer change. Returns the coefficients and the sum of the ``h`` smallest squared
    residuals."""
    kept = None
    for _ in range(steps):
        squared = (y - design @ coef) ** 2
        rows = np.sort(np.argpartition(squared, h - 1)[:h])
        if kept is not None and np.array_equal(rows, kept):
            break
        kept = rows
        coef = np.linalg.lstsq(design[rows], y[rows], rcond=None)[0]
    squared = (y - design @ coef) ** 2
    return coef, float(np.partition(squared, h - 1)[:h].sum())


def _least_trimmed_squares(design, y, random_state=0):
    """Least trimmed squares (the fit minimising the sum of the ``h = (n + p + 1) / 2``
    smallest squared residuals, breakdown point about one half): the best of
    :data:`HIGH_BREAKDOWN_SUBSETS` exact fits to ``p`` random rows, each concentrated
    twice on up to :data:`HIGH_BREAKDOWN_ROWS` rows, concentrated to convergence on all
    ``n`` rows (FAST-LTS's scheme, seeded). Returns the coefficients and every row's
    residual."""
    n, p = design.shape
    rng = np.random.default_rng(random_state)
    search = np.linspace(0, n - 1, min(n, HIGH_BREAKDOWN_ROWS)).astype(np.int64)
    small_design, small_y = design[search], y[search]
    h_small = min(search.size, (search.size + p + 1) // 2)
    best, best_value = None, np.inf
    for _ in range(HIGH_BREAKDOWN_SUBSETS):
        rows = rng.choice(search.size, size=min(p, search.size), replace=False)
        coef = np.linalg.lstsq(small_design[rows], small_y[rows], rcond=None)[0]
        coef, value = _trimmed_fit(small_design, small_y, coef, h_small, 2)
        if value < best_value:
            best, best_value = coef, value
    coef, _ = _trimmed_fit(design, y, best, min(n, (n + p + 1) // 2), HIGH_BREAKDOWN_STEPS)
    return coef, y - design @ coef


@jit
def student_t_link_rows(U, y, start, count, params, order, values, slopes, curvatures):
    """:func:`student_t_link` over a block of rows (``specs.LINK_ROWS``), the scale's
    exponential taken once for the rows that share it (the same values, bit for bit, as
    each row's own)."""
    U, params, slopes, curvatures = link_rows_views(U, params, slopes, curvatures)
    last = curvatures.shape[0] - 1
    nu = params[0]
    known_scale = inverse_scale = math.nan
    for r in range(count):
        u = U[r]
        log_scale = u[1] if u.shape[0] > 1 else params[1]
        if log_scale != known_scale:  # another scale (never within one call of a pass)
            known_scale = log_scale
            inverse_scale = math.exp(-log_scale)
        values[r] = _link_at_inverse_scale(u, y[start + r], nu, log_scale, inverse_scale,
                                           order, slopes[r], curvatures[min(r, last)])


class StudentTModel(LinearModel):
    """Student-t regression with ``nu`` degrees of freedom and a sampled scale
    (``log_scale=None``, one extra parameter) or a fixed one."""

    name = "Student-t"
    link = student_t_link
    link_rows = student_t_link_rows
    bound_coefficients = student_t_bound

    def __init__(self, nu, scale=None):
        super().__init__(1)
        self.nu = float(nu)
        self.fixed_scale = scale
        self.fixed_log_scale = None if scale is None else float(np.log(scale))
        self.n_extra = 0 if scale is not None else 1
        self.bound_log_scale = 0.0 if scale is None else self.fixed_log_scale

    def extra_parameters(self):
        """The scale, sampled as its log (when it is not fixed)."""
        return () if self.fixed_scale is not None else (("scale", np.exp, np.log),)

    def fixed_parameters(self):
        return {} if self.fixed_scale is None else {"scale": self.fixed_scale}

    def params(self):
        return np.array([self.nu, 0.0 if self.fixed_log_scale is None else self.fixed_log_scale])

    def _start_rows(self, data):
        """Least squares on every row (in one pass, lightly ridged so that it always exists)
        and up to :data:`ROBUST_START_ROWS` evenly spaced rows as ``(design, y)`` (the
        design with its column of ones): ``(coef, ridge, design, y)``."""
        block = data.block
        gram, moment = data.sum_parts(_normal_equations)
        ridge = 1e-8 * max(np.trace(gram) / block, 1e-300)
        coef = np.linalg.solve(gram + ridge * np.eye(block), moment)
        rows = np.linspace(0, data.n_rows - 1, min(data.n_rows, ROBUST_START_ROWS))
        X, y = data.take(rows.astype(np.int64))
        if data.sparse:
            design = sp.hstack([X, np.ones((X.shape[0], 1))] if data.intercept else [X],
                               format="csr")
        else:
            design = np.asarray(X, dtype=float)
            if data.intercept:
                design = np.column_stack([design, np.ones(design.shape[0])])
        return coef, ridge, design, np.asarray(y, dtype=float)

    def _theta(self, data, coef, residual, typical):
        """The parameters for ``coef``, with the log of the residuals' scaled median
        absolute deviation as the log-scale (when it is sampled)."""
        theta = np.zeros(self.n_params(data))
        theta[:data.block] = coef
        if self.fixed_log_scale is None:
            spread = np.median(np.abs(residual - np.median(residual))) / 0.6745
            theta[-1] = np.log(max(spread, 1e-3 * typical, 1e-300))
        return theta

    def initial_theta(self, data, prior):
        """A robust start: least squares refined toward least absolute deviations by
        iteratively reweighted least squares on up to :data:`ROBUST_START_ROWS` evenly
        spaced rows, and the log of the residuals' scaled median absolute deviation.

        Least squares alone is dragged by gross outliers (5% of ``y`` at 1e8 put it, and
        the MAP found from it, in a mode of coefficients near 1e6); absolute deviations
        are not, so the Student-t MAP is sought from the bulk of the data.
        """
        return self.initial_thetas(data, prior)[0]

    def initial_thetas(self, data, prior):
        """Three starts, the MAP search keeping the best log posterior found from them:
        least absolute deviations (see :meth:`initial_theta`); least trimmed squares
        (:func:`_least_trimmed_squares`, with at most :data:`HIGH_BREAKDOWN_MAX_COLUMNS`
        columns), which ignores up to half of the rows,
        high-leverage ones included, where absolute deviations are still dragged by rows
        whose features are far out; and the prior mean (coefficients 0).

        Raises ``ValueError`` when y is a linear function of X (the posterior of the noise
        scale is then improper).
        """
        coef, ridge, design, y = self._start_rows(data)
        residual = y - design @ coef
        typical = np.std(y)
        if (self.fixed_log_scale is None and np.sqrt(np.mean(residual**2))
                <= EXACT_FIT_TOLERANCE * max(typical, 1e-300)):
            raise ValueError(
                "y is a linear function of X (the least-squares residuals vanish up to "
                "rounding): the posterior of the noise scale is then improper (it "
                "piles up at 0). Fix `scale`, or check y for a copy of a feature.")
        fits = [_least_absolute_deviations(design, y, coef, ridge)]
        if design.shape[1] <= HIGH_BREAKDOWN_MAX_COLUMNS:  # dense: at most 16 MB here
            dense = design.toarray() if sp.issparse(design) else design
            fits.append(_least_trimmed_squares(dense, y))
        fits.append((np.zeros(data.block), y - np.median(y)))
        if self.fixed_log_scale is None:
            self._refuse_unbounded_likelihood([residual for _, residual in fits], y)
        return [self._theta(data, fit_coef, residual, typical) for fit_coef, residual in fits]

    def _refuse_unbounded_likelihood(self, residuals, y):
        """Raise ``ValueError`` when the starts' fits (``residuals`` of ``y``, each over the
        same rows) show a line through so many rows that the posterior is improper. A row
        is on the line when its residual is within rounding of y's median absolute
        deviation (not of its sd, which gross outliers inflate).

        A line through ``m`` of ``n`` rows gives, as the scale ``s`` goes to 0, ``1 / s``
        for each row it fits and ``s^nu`` for each other row; with the exponential prior on
        ``s`` (a factor ``s`` in ``log s``), the posterior in ``log s`` behaves as
        ``s^(1 + nu (n - m) - m)``, which cannot be integrated down to ``s = 0`` once
        ``m >= nu (n - m) + 1`` (at temperature 1). Many equal values of ``y`` do this
        (the line of the intercept alone): with ``nu = 4``, 33 of 40, or 80% of a tall y.
        """
        n_rows = len(residuals[0])
        spread = max(float(np.median(np.abs(y - np.median(y)))),
                     1e-12 * float(np.max(np.abs(y))), 1e-300)
        fitted = max(int(np.sum(np.abs(residual) <= EXACT_FIT_TOLERANCE * spread))
                     for residual in residuals)
        if fitted >= self.nu * (n_rows - fitted) + 1:
            raise ValueError(
                f"{fitted} of {n_rows} rows of y lie exactly on one linear function of X "
                f"(for example, many equal values of y): the Student-t likelihood with "
                f"nu={self.nu:g} then grows without bound as the noise scale goes to 0 and "
                f"the posterior is improper (from {self.nu:g} x the other rows + 1 exactly "
                f"fitted rows on). Fix `scale`, or model such y with another family (counts, "
                f"or a separate model of the zeros).")

    def lipschitz(self, max_row_norm):
        """With a fixed scale ``s``: ``|dl/deta| = (nu + 1) |r| / (nu s^2 + r^2) <= (nu + 1) /
        (2 sqrt(nu) s)``. With a sampled scale there is none (the slope grows without bound
        as ``s -> 0``)."""
        if self.fixed_log_scale is None:
            return None
        return ((self.nu + 1.0) / (2.0 * math.sqrt(self.nu) * math.exp(self.fixed_log_scale))
                * float(max_row_norm))

    def firefly_bound_params(self, bound):
        if bound == "map":
            return np.array([1.0, 0.0])
        return np.array([0.0, UNTUNED_STANDARDISED_RESIDUAL**2 / self.nu])

    def log_likelihood(self, eta, variables, y):
        """Student-t log density of ``y`` with location ``eta`` and each draw's scale."""
        scale, nu = variables["scale"], self.nu
        z = (y[None, :] - eta[..., 0]) / scale[:, None]
        constant = gammaln((nu + 1) / 2) - gammaln(nu / 2) - 0.5 * np.log(nu * np.pi)
        return constant - np.log(scale)[:, None] - (nu + 1) / 2 * np.log1p(z * z / nu)

    def simulate(self, eta, variables, rng):
        scale = variables["scale"][:, None]
        return eta[..., 0] + scale * rng.standard_t(self.nu, size=eta.shape[:2])

    def mixture_quantiles(self, eta, variables, quantiles):
        return student_t_mixture_quantiles(eta[..., 0], variables["scale"], self.nu, quantiles)

    def mean(self, eta, variables):
        return eta[..., 0]

    @staticmethod
    def mean_curvature(eta):
        """The mean is ``eta`` itself: no curvature."""
        return eta.copy(), np.zeros_like(eta)

    def third_derivative_bound(self, low, high):
        """The mean is ``eta`` itself."""
        return np.zeros(np.shape(low))

    def noise_variance(self, eta, variables):
        """``s^2 nu / (nu - 2)``; infinite for ``nu <= 2``."""
        nu = float(self.nu)
        factor = nu / (nu - 2.0) if nu > 2.0 else np.inf
        return np.broadcast_to(variables["scale"][:, None] ** 2 * factor, eta.shape[:2])


#: Safeguarded Newton iterations for a Student-t mixture quantile: each halves the bracket
#: at worst, so this bounds the error by 2^-60 of the components' quantile range.
QUANTILE_ITERATIONS = 60
#: ... and they stop once every step is below this fraction of the bracket's initial width
#: (far below the quantile's Monte Carlo error, about the width over the root of the draws).
QUANTILE_TOLERANCE = 1e-7
#: Draws of the thinned mixture whose quantile starts the whole mixture's search.
COARSE_DRAWS = 250


def student_t_mixture_quantiles(location, scale, nu, quantiles):
    """Quantiles of the equal mixture over draws of ``location + scale * t_nu``.

    Parameters
    ----------
    location : ndarray of shape (n_draws, n_rows)
    scale : ndarray of shape (n_draws,)
    nu : float
    quantiles : ndarray of shape (n_quantiles,), each in (0, 1)

    Returns
    -------
    ndarray of shape (n_rows, n_quantiles)

    Each is the root of the mixture's CDF minus ``q``, found by Newton steps kept inside a
    bracket (the components' own quantiles bound the mixture's), bisecting when a step
    would leave it. The t CDF is costly, so above :data:`COARSE_DRAWS` draws the root of
    an evenly thinned mixture comes first and the whole mixture then polishes it (a few
    steps).
    """
    from scipy.stats import t as student_t

    out = np.empty((location.shape[1], quantiles.size))
    step = max(1, location.shape[0] // COARSE_DRAWS)
    for j, q in enumerate(quantiles):
        component = location + scale[:, None] * student_t.ppf(q, nu)
        low, high = component.min(axis=0), component.max(axis=0)
        x = np.median(component, axis=0)
        width = np.maximum(high - low, 1e-300)
        if step > 1:
            x = _t_mixture_root(location[::step], scale[::step], nu, q, x, low, high, width)
        out[:, j] = _t_mixture_root(location, scale, nu, q, x, low, high, width)
    return out


def _t_mixture_root(location, scale, nu, q, x, low, high, width):
    """Safeguarded Newton on ``mean_s T_nu((x - location_s) / scale_s) = q`` from ``x``
    inside ``[low, high]`` (each of shape (n_rows,)).

    A row stops once its step is within :data:`QUANTILE_TOLERANCE` of its width, so that
    its root does not depend on the other rows. (Iterating on at a root found to the last
    digit, the step lands on the bracket's end it just set: that bisection had thrown the
    converged rows half their bracket away, 27 iterations against 3.) A step onto the
    bracket's end is taken: it means a zero excess."""
    x, low, high = x.copy(), low.copy(), high.copy()
    log_constant = gammaln((nu + 1) / 2) - gammaln(nu / 2) - 0.5 * np.log(nu * np.pi)
    active = np.arange(x.size)
    for _ in range(QUANTILE_ITERATIONS):
        at = x[active]
        z = (at[None, :] - location[:, active]) / scale[:, None]
        excess = stdtr(nu, z).mean(axis=0) - q
        density = (np.exp(log_constant - (nu + 1) / 2 * np.log1p(z * z / nu))
                   / scale[:, None]).mean(axis=0)
        below = np.where(excess < 0, at, low[active])
        above = np.where(excess >= 0, at, high[active])
        with np.errstate(divide="ignore", invalid="ignore"):
            step = at - excess / density
        inside = np.isfinite(step) & (step >= below) & (step <= above)
        new = np.where(inside, step, 0.5 * (below + above))
        done = np.abs(new - at) <= QUANTILE_TOLERANCE * width[active]
        x[active], low[active], high[active] = new, below, above
        active = active[~done]
        if active.size == 0:
            break
    return x
