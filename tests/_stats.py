"""Statistical assertions the sampler-agreement tests share: two sets of draws describe
the same distribution within both sides' Monte Carlo error.

Each side's error comes from its own draws (``mcse_mean`` and ``mcse_sd``, which read the
chains' autocorrelation), so a long exact reference and a short fit are each charged what
they can resolve. ``minimum_detectable_bias`` says what a test of a given size can see:
a test that cannot see a 0.1 sd mean shift or a 10% error in an sd is too small, and
``tests/sampling/test_stats_helpers.py`` shows the assertion failing on a sampler biased by
that much.
"""
import numpy as np

from skbayes_mh.diagnostics import mcse_mean, mcse_sd

#: Tolerances are this many combined Monte Carlo standard errors: a coordinate of a correct
#: sampler passes with probability 1 - 6.3e-5 (normal tails), so a test over a few hundred
#: coordinates fails by chance about once in a hundred seeds.
Z_LIMIT = 4.0


def _as_chains(draws):
    """``draws`` as ``(chains, draws, k)``: ``(draws, k)`` is one chain."""
    draws = np.asarray(draws, dtype=np.float64)
    if draws.ndim == 2:
        draws = draws[None]
    return draws.reshape(draws.shape[0], draws.shape[1], -1)


def distribution_gaps(draws, reference):
    """Each coordinate's gap between ``draws`` and ``reference`` (each ``(chains, draws,
    ...)`` or ``(draws, ...)``, the same trailing shape) in combined Monte Carlo standard
    errors: ``(mean_z, sd_z)``, each of shape ``(k,)``."""
    a, b = _as_chains(draws), _as_chains(reference)
    mean_error = np.sqrt(mcse_mean(a) ** 2 + mcse_mean(b) ** 2)
    sd_error = np.sqrt(mcse_sd(a) ** 2 + mcse_sd(b) ** 2)
    mean_z = (a.mean(axis=(0, 1)) - b.mean(axis=(0, 1))) / mean_error
    sd_z = (a.std(axis=(0, 1)) - b.std(axis=(0, 1))) / sd_error
    return mean_z, sd_z


def assert_same_distribution(draws, reference, z_limit=Z_LIMIT, label=""):
    """Every coordinate's mean and sd of ``draws`` within ``z_limit`` combined Monte Carlo
    standard errors of ``reference``'s (see :func:`distribution_gaps`)."""
    mean_z, sd_z = distribution_gaps(draws, reference)
    worst = int(np.argmax(np.maximum(np.abs(mean_z), np.abs(sd_z))))
    assert np.all(np.abs(mean_z) < z_limit) and np.all(np.abs(sd_z) < z_limit), (
        f"{label} coordinate {worst}: mean off by {mean_z[worst]:.1f}, sd by {sd_z[worst]:.1f} "
        f"standard errors (largest |z|: mean {np.abs(mean_z).max():.1f}, sd "
        f"{np.abs(sd_z).max():.1f})")


#: The power at which :func:`minimum_detectable_bias` counts a bias as seen ...
POWER = 0.9
#: ... that is, a gap of this many standard errors beyond ``z_limit`` (the normal's 90%).
POWER_MARGIN = 1.2816


def minimum_detectable_bias(draws, reference, z_limit=Z_LIMIT):
    """The smallest mean shift (in posterior sds) and relative sd error that
    :func:`assert_same_distribution` rejects with probability :data:`POWER` in every
    coordinate: ``(mean_shift, sd_ratio_error)``, the largest over the coordinates of
    ``z_limit + POWER_MARGIN`` combined standard errors."""
    a, b = _as_chains(draws), _as_chains(reference)
    sd = b.std(axis=(0, 1))
    mean_error = np.sqrt(mcse_mean(a) ** 2 + mcse_mean(b) ** 2)
    sd_error = np.sqrt(mcse_sd(a) ** 2 + mcse_sd(b) ** 2)
    gap = z_limit + POWER_MARGIN
    return float(np.max(gap * mean_error / sd)), float(np.max(gap * sd_error / sd))
