"""Statistical assertions the sampler-agreement tests share: draws describe a reference
distribution (other draws, or exact moments) within both sides' Monte Carlo error, and the
test is large enough to see the bias it is there to catch.

Each side's error comes from its own draws (``mcse_mean`` and ``mcse_sd``, which read the
chains' autocorrelation; or the plain formulas for independent draws, such as the final
states of many short chains), so a long exact reference and a short fit are each charged
what they can resolve; exact moments (an analytic or grid posterior) carry no error.
:func:`minimum_detectable_bias` says what a test of a given size can see, and
:func:`assert_same_distribution` refuses, by default, a test that cannot see a 0.1 sd shift
of a mean or a 10% error in an sd (:data:`DETECT`): ``tests/sampling/test_stats_helpers.py``
shows the assertion failing on a sampler biased by that much.
"""
from typing import NamedTuple

import numpy as np

from skbayes_mh.diagnostics import mcse_mean, mcse_sd

#: Tolerances are this many combined Monte Carlo standard errors: a coordinate of a correct
#: sampler passes with probability 1 - 6.3e-5 (normal tails), so a test over a few hundred
#: coordinates fails by chance about once in a hundred seeds.
Z_LIMIT = 4.0
#: The power at which :func:`minimum_detectable_bias` counts a bias as seen ...
POWER = 0.9
#: ... that is, a gap of this many standard errors beyond ``z_limit`` (the normal's 90%).
POWER_MARGIN = 1.2816
#: What every agreement test must see: a mean shifted by 0.1 posterior sd, an sd 10% off.
DETECT = (0.1, 0.1)


class Moments(NamedTuple):
    """A reference known by its moments: each coordinate's ``mean`` and ``sd`` (shape
    ``(k,)``), exact (an analytic or grid posterior) or with their Monte Carlo standard
    errors (a long run's summary)."""

    mean: np.ndarray
    sd: np.ndarray
    mean_error: np.ndarray = 0.0
    sd_error: np.ndarray = 0.0


class Independent(NamedTuple):
    """Independent draws ``(n, k)``, or ``(n, m, k)``: ``n`` independent groups of ``m``
    draws each (e.g. the states of ``n`` short chains started at exact draws, ``m`` from
    each). Their errors come from the groups' means (batch means over independent groups,
    exact whatever the correlation within a group), not an autocorrelation estimate."""

    draws: np.ndarray


def _as_chains(draws):
    """``draws`` as ``(chains, draws, k)``: ``(draws, k)`` is one chain."""
    draws = np.asarray(draws, dtype=np.float64)
    if draws.ndim == 1:
        draws = draws[:, None]
    if draws.ndim == 2:
        draws = draws[None]
    return draws.reshape(draws.shape[0], draws.shape[1], -1)


def moments_and_errors(side):
    """``(mean, sd, mean_error, sd_error)`` of one side, each of shape ``(k,)``: draws
    (``(chains, draws, ...)`` or ``(draws, ...)``), :class:`Independent` draws, or exact
    :class:`Moments`."""
    if isinstance(side, Moments):
        mean = np.ravel(np.asarray(side.mean, dtype=np.float64))
        sd = np.ravel(np.asarray(side.sd, dtype=np.float64))
        return (mean, sd, np.broadcast_to(np.asarray(side.mean_error, float), mean.shape),
                np.broadcast_to(np.asarray(side.sd_error, float), sd.shape))
    if isinstance(side, Independent):
        x = np.asarray(side.draws, dtype=np.float64)
        x = x[:, None, :] if x.ndim == 2 else x.reshape(x.shape[0], x.shape[1], -1)
        n = x.shape[0]
        mean = x.mean(axis=(0, 1))
        squares = ((x - mean) ** 2).mean(axis=1)  # each group's mean square deviation
        sd = np.sqrt(squares.mean(axis=0))
        # The sd's error by the delta method: d s = d s^2 / (2 s).
        return (mean, sd, x.mean(axis=1).std(axis=0, ddof=1) / np.sqrt(n),
                squares.std(axis=0, ddof=1) / np.sqrt(n) / (2 * sd))
    x = _as_chains(side)
    mean, sd = x.mean(axis=(0, 1)), x.std(axis=(0, 1))
    # The sd's error also by the delta method on the squared deviations' own
    # autocorrelation (d s = d s^2 / 2s); the larger of that and ``mcse_sd``, which reads
    # the draws' autocorrelation: Hamiltonian paths' squares mix about half as well as
    # their draws (4,500 against 8,500 effective of 12,000), so that alone understated it.
    squares_error = mcse_mean((x - mean) ** 2) / (2 * sd)
    return mean, sd, mcse_mean(x), np.maximum(mcse_sd(x), squares_error)


def _gaps(a, b):
    """``(mean_z, sd_z)`` of two sides' :func:`moments_and_errors`."""
    return ((a[0] - b[0]) / np.hypot(a[2], b[2]), (a[1] - b[1]) / np.hypot(a[3], b[3]))


def _detectable(a, b, z_limit):
    """``(mean_shift, sd_ratio_error)`` of two sides' :func:`moments_and_errors`."""
    gap, sd = z_limit + POWER_MARGIN, b[1]
    return (float(np.max(gap * np.hypot(a[2], b[2]) / sd)),
            float(np.max(gap * np.hypot(a[3], b[3]) / sd)))


def distribution_gaps(draws, reference):
    """Each coordinate's gap between ``draws`` and ``reference`` (each as in
    :func:`moments_and_errors`, the same number of coordinates) in combined Monte Carlo
    standard errors: ``(mean_z, sd_z)``, each of shape ``(k,)``."""
    return _gaps(moments_and_errors(draws), moments_and_errors(reference))


def minimum_detectable_bias(draws, reference, z_limit=Z_LIMIT):
    """The smallest mean shift (in posterior sds) and relative sd error that
    :func:`assert_same_distribution` rejects with probability :data:`POWER` in every
    coordinate: ``(mean_shift, sd_ratio_error)``, the largest over the coordinates of
    ``z_limit + POWER_MARGIN`` combined standard errors."""
    return _detectable(moments_and_errors(draws), moments_and_errors(reference), z_limit)


def assert_same_distribution(draws, reference, z_limit=Z_LIMIT, label="", detect=DETECT):
    """Every coordinate's mean and sd of ``draws`` within ``z_limit`` combined Monte Carlo
    standard errors of ``reference``'s (see :func:`distribution_gaps`); and, unless
    ``detect`` is None, the test large enough to reject a mean shifted by ``detect[0]``
    posterior sds or an sd off by the fraction ``detect[1]`` (with probability
    :data:`POWER`: :func:`minimum_detectable_bias`)."""
    a, b = moments_and_errors(draws), moments_and_errors(reference)
    if detect is not None:
        mean_shift, sd_error = _detectable(a, b, z_limit)
        assert mean_shift <= detect[0] and sd_error <= detect[1], (
            f"{label} too few effective draws to test: it would see a mean shift of "
            f"{mean_shift:.3f} sd and an sd error of {sd_error:.1%}, not {detect[0]} sd and "
            f"{detect[1]:.0%}")
    mean_z, sd_z = _gaps(a, b)
    worst = int(np.argmax(np.maximum(np.abs(mean_z), np.abs(sd_z))))
    assert np.all(np.abs(mean_z) < z_limit) and np.all(np.abs(sd_z) < z_limit), (
        f"{label} coordinate {worst}: mean off by {mean_z[worst]:.1f}, sd by {sd_z[worst]:.1f} "
        f"standard errors (largest |z|: mean {np.abs(mean_z).max():.1f}, sd "
        f"{np.abs(sd_z).max():.1f})")


def assert_same_posterior(first, second, label="", detect=DETECT):
    """Two fitted estimators sample the same posterior: :func:`assert_same_distribution` on
    their draws of every parameter (``_theta_draws``: weights, intercepts, and the scale or
    dispersion on the sampler's scale)."""
    assert_same_distribution(first._theta_draws(), second._theta_draws(), label=label,
                             detect=detect)
