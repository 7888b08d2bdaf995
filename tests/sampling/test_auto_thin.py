"""``thin="auto"`` (``AutoThin``): the autocorrelation time measured on the warm-up's last
quarter, to independence or as far as an ESS goal needs."""
import numpy as np
import pytest

from skbayes_mh.sampling import AutoThin


def ar1(phi, n, d, seed):
    """``n`` draws of ``d`` independent AR(1) chains with coefficient ``phi`` (integrated
    autocorrelation time ``(1 + phi) / (1 - phi)``)."""
    rng = np.random.default_rng(seed)
    draws = np.empty((n, d))
    draws[0] = rng.standard_normal(d)
    for t in range(1, n):
        draws[t] = phi * draws[t - 1] + np.sqrt(1 - phi**2) * rng.standard_normal(d)
    return draws


@pytest.mark.parametrize("seed", range(3))
def test_thin_follows_the_autocorrelation_time_and_the_ess_goal(seed):
    # tau = 9; the last quarter of 8,000 warm-up draws (2,000) estimates it from the
    # smallest of 3 coordinates' ESS, which errs upward (seeds 0-5: 9 to 13).
    draws = ar1(0.8, 8000, 3, seed)
    independent_thin = AutoThin(20)(draws, None)
    assert 8 <= independent_thin <= 14
    assert AutoThin(20, ess_goal=1000, n_draws=1000)(draws, None) == independent_thin
    # Fewer kept draws than the goal: never thinner than independence.
    assert AutoThin(20, ess_goal=250, n_draws=150)(draws, None) == independent_thin
    # 250 a chain from 1,000 kept draws: a quarter of the autocorrelation time, rounded up
    # (ceil(ceil(t) / 4) = ceil(t / 4)).
    assert AutoThin(20, ess_goal=250, n_draws=1000)(draws, None) == -(-independent_thin // 4)
    assert AutoThin(2)(draws, None) == 2  # the cap
    independent = np.random.default_rng(seed).standard_normal((8000, 3))
    assert AutoThin(20, ess_goal=250, n_draws=1000)(independent, None) == 1
