"""The shared statistical assertions (``tests/_stats.py``) pass draws of the same
distribution and fail draws biased by what the agreement tests must see: a 0.1 sd shift of
a mean, or an sd 10% too small."""
import numpy as np
import pytest

from _stats import Independent, Moments, assert_same_distribution, minimum_detectable_bias


def _ar1_chains(n_chains, n_draws, d, rho, seed):
    """Stationary AR(1) chains of standard normal marginals (autocorrelation ``rho``)."""
    rng = np.random.default_rng(seed)
    x = np.empty((n_chains, n_draws, d))
    x[:, 0] = rng.standard_normal((n_chains, d))
    scale = np.sqrt(1 - rho**2)
    for t in range(1, n_draws):
        x[:, t] = rho * x[:, t - 1] + scale * rng.standard_normal((n_chains, d))
    return x


def test_draws_of_one_distribution_pass():
    reference = _ar1_chains(4, 4000, 20, 0.5, seed=0)
    draws = _ar1_chains(4, 2000, 20, 0.8, seed=1)
    # (About 900 effective draws a side: too few to see a 10% sd error, not the point here.)
    assert_same_distribution(draws, reference, detect=None)


@pytest.mark.parametrize("shift, scale", [(0.1, 1.0), (0.0, 0.9)])
def test_a_sampler_biased_by_what_the_tests_must_see_fails(shift, scale):
    """With about 8,600 effective draws a side (what an agreement test needs), a mean
    0.1 sd off or an sd 10% narrow is rejected, and the helper says it would see either
    with 90% power in each coordinate."""
    reference = _ar1_chains(4, 4000, 20, 0.3, seed=2)
    draws = shift + scale * _ar1_chains(4, 4000, 20, 0.3, seed=3)
    mean_shift, sd_error = minimum_detectable_bias(draws, reference)
    assert mean_shift <= 0.1 and sd_error <= 0.1
    with pytest.raises(AssertionError):
        assert_same_distribution(draws, reference)


def test_a_test_too_small_to_see_the_bias_is_refused():
    """Draws of the right distribution, but too few to see a 10% sd error: the assertion
    refuses the test rather than pass it."""
    reference = _ar1_chains(4, 4000, 5, 0.3, seed=4)
    draws = _ar1_chains(2, 300, 5, 0.3, seed=5)
    with pytest.raises(AssertionError, match="too few effective draws"):
        assert_same_distribution(draws, reference)
    assert_same_distribution(draws, reference, detect=None)


@pytest.mark.parametrize("shift, scale", [(0.0, 1.0), (0.1, 1.0), (0.0, 0.9)])
def test_exact_moments_and_independent_draws(shift, scale):
    """Against exact moments (an analytic or grid posterior) only the draws' error counts;
    independent draws (the final states of many chains) take the plain formulas' errors.
    Each passes the unbiased draws and fails a 0.1 sd shift or a 10% narrow sd."""
    exact = Moments(np.zeros(20), np.ones(20))
    chains = shift + scale * _ar1_chains(4, 2000, 20, 0.3, seed=6)
    independent = Independent(shift + scale * np.random.default_rng(7).standard_normal((4000, 20)))
    for draws in (chains, independent):
        if shift == 0.0 and scale == 1.0:
            assert_same_distribution(draws, exact)
        else:
            with pytest.raises(AssertionError, match="standard errors"):
                assert_same_distribution(draws, exact)
