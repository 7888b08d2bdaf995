"""The correction distribution: a proper distribution whose sum with N(0, sigma^2) is
the standard logistic, checked independently of how it was built."""
import numpy as np
import pytest
from scipy import stats
from scipy.special import expit, ndtr

from skbayes_mh.acceptance import CorrectionDistribution
from skbayes_mh.acceptance._build_correction import (TABLE_SIGMAS, build_correction, fit_design,
                                                      fit_grid)


def independent_sup_error(correction, half_width=40.0, n=400_001):
    y = np.linspace(-half_width, half_width, n)
    cdf = np.concatenate([ndtr((chunk[:, None] - correction.support) / correction.sigma)
                          @ correction.weights for chunk in np.array_split(y, 40)])
    return np.max(np.abs(cdf - expit(y)))


def test_sup_error_at_sigma_one_is_below_1e_5():
    correction = CorrectionDistribution(1.0)
    assert independent_sup_error(correction) <= 1e-5


@pytest.mark.parametrize("sigma", [0.5, 0.75, 1.0, 1.1, 1.2])
def test_proper_distribution_accurate_over_the_supported_range(sigma):
    correction = CorrectionDistribution(sigma)
    assert np.all(correction.weights > 0)
    assert correction.weights.sum() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(correction.support, -correction.support[::-1], atol=1e-12)
    error = independent_sup_error(correction)
    assert error <= 5e-5
    assert error == pytest.approx(correction.sup_error, rel=0.05, abs=1e-7)


def test_variance_matches_the_logistic():
    # Var(N(0, s^2) + C) = pi^2 / 3 to the accuracy the CDF match allows.
    correction = CorrectionDistribution(1.0)
    variance = 1.0 + np.sum(correction.weights * correction.support**2)
    assert variance == pytest.approx(np.pi**2 / 3, rel=1e-3)


def test_every_shipped_entry_is_a_proper_symmetric_distribution():
    # All 101 tabulated sigmas (the accuracy of a sample of them is checked above).
    for sigma in TABLE_SIGMAS:
        correction = CorrectionDistribution(float(sigma))
        assert np.all(correction.weights > 0)
        assert correction.weights.sum() == pytest.approx(1.0, abs=1e-12)
        np.testing.assert_allclose(correction.support, -correction.support[::-1], atol=1e-12)
        np.testing.assert_allclose(correction.weights, correction.weights[::-1], rtol=1e-12)


def fitted_cdf(support, weights, sigma):
    """P(N(0, sigma^2) + C <= y) on the grid where the table is fitted."""
    return ndtr((fit_grid()[:, None] - support[None, :]) / sigma) @ weights


@pytest.mark.parametrize("sigma", [0.5, 1.0, 1.37])
def test_shipped_table_is_what_the_script_builds(sigma):
    # The solver (scipy's Lawson-Hanson active-set NNLS) stops on the exact KKT sign test
    # and treats a column as dependent when its part orthogonal to the chosen columns is
    # below 100 ulp of its norm. The weights of nearly collinear columns are therefore not
    # determined: they move by up to 1e-5 between NumPy/SciPy releases. What the solve
    # determines is the fitted CDF: the projection of the target on the cone of the
    # columns, which a perturbation of every column by delta * |a_j| moves by at most
    # delta * sum_j w_j |a_j| <= delta * max_j |a_j| (the weights sum to 1). With
    # delta = 100 eps, and a factor of 10 for rounding accumulated over the active-set
    # updates, that is the tolerance below (about 2e-10 in CDF units).
    assert sigma in TABLE_SIGMAS
    design, _ = fit_design(sigma)
    tolerance = 10 * 100 * np.finfo(float).eps * np.linalg.norm(design, axis=0).max()
    shipped = CorrectionDistribution(sigma)
    support, weights = build_correction(sigma)
    difference = fitted_cdf(shipped.support, shipped.weights, sigma) - fitted_cdf(support, weights, sigma)
    assert np.max(np.abs(difference)) <= tolerance
    # A table built for another sigma is far outside it: the comparison can fail.
    other_support, other_weights = build_correction(sigma + 0.01)
    assert np.max(np.abs(fitted_cdf(other_support, other_weights, sigma)
                         - fitted_cdf(shipped.support, shipped.weights, sigma))) > 1e3 * tolerance


def test_untabulated_sigma_is_solved_on_demand():
    correction = CorrectionDistribution(0.875)
    assert correction.sigma == 0.875
    assert independent_sup_error(correction) <= 1e-5


def test_samples_plus_gaussian_are_logistic():
    correction = CorrectionDistribution(1.0)
    n = 200_000
    rng = np.random.default_rng(3)
    total = correction.sample(n, random_state=4) + rng.normal(0.0, 1.0, size=n)
    # KS test at this n detects CDF errors down to ~0.004: a bad table would fail.
    assert stats.kstest(total, stats.logistic.cdf).pvalue > 1e-3
    # A plain Gaussian of the same variance is rejected by the same test.
    gaussian = rng.normal(0.0, np.pi / np.sqrt(3), size=n)
    assert stats.kstest(gaussian, stats.logistic.cdf).pvalue < 1e-6


@pytest.mark.parametrize("sigma", [0.49, 1.51, -1.0, np.nan, "1", True])
def test_invalid_sigma_is_refused(sigma):
    with pytest.raises(ValueError, match="sigma"):
        CorrectionDistribution(sigma)
