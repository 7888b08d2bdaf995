"""Per-draw predictive quantities of the linear models, on NumPy arrays of linear predictors
``eta`` of shape ``(n_draws, n_rows, n_outputs)``: each row's log-likelihood, simulated
outcomes, and the quantiles of the posterior-predictive mixture (every draw's noise
distribution, weighted equally)."""
import numpy as np
from scipy.special import gammaln, logsumexp, pdtr, stdtr

#: Safeguarded Newton iterations for a Student-t mixture quantile: each halves the bracket
#: at worst, so this bounds the error by 2^-60 of the components' quantile range.
QUANTILE_ITERATIONS = 60
#: ... and they stop once every step is below this fraction of the bracket's initial width
#: (far below the quantile's Monte Carlo error, about the width over the root of the draws).
QUANTILE_TOLERANCE = 1e-7
#: Draws of the thinned mixture whose quantile starts the whole mixture's search.
COARSE_DRAWS = 250


def checked_reference_proba(reference_proba, n_rows):
    """Reference probabilities of class 1 for a predictive-mean risk, validated.

    Parameters
    ----------
    reference_proba : array-like of shape (n_rows,) or (n_rows, 2)
        Probabilities of class 1, or both classes' (the second column is taken).
    n_rows : int

    Returns
    -------
    ndarray of shape (n_rows,)
    """
    reference = np.asarray(reference_proba, dtype=np.float64)
    if reference.ndim == 2:
        reference = reference[:, 1]
    if reference.shape != (n_rows,):
        raise ValueError(f"reference_proba must have {n_rows} rows (one per row of X); "
                         f"got shape {np.shape(reference_proba)}.")
    valid = (reference >= 0) & (reference <= 1)
    if not np.all(valid):
        row = int(np.flatnonzero(~valid)[0])
        raise ValueError(f"reference_proba must be probabilities in [0, 1]; row {row} is "
                         f"{float(reference[row])}.")
    return reference


def logistic_log_likelihood(eta, y):
    """``log p(y | eta)`` for labels ``y`` in {0, 1}: ``(n_draws, n_rows)``."""
    sign = 2.0 * y - 1.0
    return -np.logaddexp(0.0, -sign * eta[..., 0])


def softmax_log_likelihood(eta, y):
    """``log softmax(eta)[y]`` for class indices ``y``: ``(n_draws, n_rows)``."""
    chosen = np.take_along_axis(eta, y[None, :, None], axis=2)[..., 0]
    return chosen - logsumexp(eta, axis=2)


def student_t_log_likelihood(eta, scale, nu, y):
    """Student-t log density of ``y`` with location ``eta``, per-draw ``scale`` (n_draws,)
    and ``nu`` degrees of freedom: ``(n_draws, n_rows)``."""
    z = (y[None, :] - eta[..., 0]) / scale[:, None]
    constant = gammaln((nu + 1) / 2) - gammaln(nu / 2) - 0.5 * np.log(nu * np.pi)
    return constant - np.log(scale)[:, None] - (nu + 1) / 2 * np.log1p(z * z / nu)


def poisson_log_likelihood(eta, y):
    """Poisson log mass of counts ``y`` at rate ``exp(eta)``: ``(n_draws, n_rows)``."""
    return y[None, :] * eta[..., 0] - np.exp(eta[..., 0]) - gammaln(y + 1.0)[None, :]


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
    inside ``[low, high]`` (each of shape (n_rows,))."""
    low, high = low.copy(), high.copy()
    log_constant = gammaln((nu + 1) / 2) - gammaln(nu / 2) - 0.5 * np.log(nu * np.pi)
    for _ in range(QUANTILE_ITERATIONS):
        z = (x[None, :] - location) / scale[:, None]
        excess = stdtr(nu, z).mean(axis=0) - q
        density = (np.exp(log_constant - (nu + 1) / 2 * np.log1p(z * z / nu))
                   / scale[:, None]).mean(axis=0)
        low = np.where(excess < 0, x, low)
        high = np.where(excess >= 0, x, high)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = x - excess / density
        inside = np.isfinite(step) & (step > low) & (step < high)
        new = np.where(inside, step, 0.5 * (low + high))
        done = np.abs(new - x) <= QUANTILE_TOLERANCE * width
        x = new
        if done.all():
            break
    return x


def poisson_mixture_quantiles(rate, quantiles):
    """Quantiles of the equal mixture over draws of Poisson(``rate``): for each row and
    ``q``, the smallest count ``k`` with mixture CDF ``>= q``.

    Parameters
    ----------
    rate : ndarray of shape (n_draws, n_rows)
    quantiles : ndarray of shape (n_quantiles,), each in (0, 1)

    Returns
    -------
    ndarray of shape (n_rows, n_quantiles), float (whole numbers)
    """
    from scipy.stats import poisson

    out = np.empty((rate.shape[1], quantiles.size))
    for j, q in enumerate(quantiles):
        component = poisson.ppf(q, rate)
        low = component.min(axis=0) - 1  # CDF(low) < q for every row
        high = component.max(axis=0)     # CDF(high) >= q
        while np.any(high - low > 1):
            middle = np.floor((low + high) / 2)
            cdf = pdtr(np.maximum(middle, 0)[None, :], rate).mean(axis=0)
            below = (middle < 0) | (cdf < q)
            low = np.where(below, middle, low)
            high = np.where(below, high, middle)
        out[:, j] = high
    return out
