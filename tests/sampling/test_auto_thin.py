"""``thin="auto"`` (``AutoThin``): the autocorrelation time measured on the warm-up's last
half (the largest parameter's, at most three times the median's), to independence or as far
as an ESS goal needs."""
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
    # tau = 9; the last half of 8,000 warm-up draws (4,000) estimates it from the
    # smallest of 3 coordinates' ESS, which errs upward.
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


@pytest.mark.parametrize("seed", range(3))
def test_the_estimate_reads_the_warm_ups_last_half(seed):
    # The first half's autocorrelation time is 39 (the transient and early shapes); the
    # last half's draws are independent.
    draws = np.vstack([ar1(0.95, 1000, 3, seed), ar1(0.0, 1000, 3, seed + 10)])
    assert AutoThin(20)(draws, None) <= 2


def test_many_equally_slow_parameters_do_not_thin_by_their_noisiest_estimate():
    # 31 parameters of tau = 4 (as scikit-learn's breast cancer data has, largest 4.6):
    # an ESS of 250 from 1,000 kept draws needs thin 1 or 2. The largest of 31 estimates
    # from 500 draws errs upward (up to 3 times), and the slowest chain's thinning is the
    # fit's time: the estimate is at most three medians (tau about 4: thin at most 4;
    # the largest estimate alone gave 5 to 10 for 23 of these 40 seeds).
    thins = [AutoThin(10, ess_goal=250, n_draws=1000)(ar1(0.6, 1000, 31, seed), None)
             for seed in range(40)]
    assert max(thins) <= 4
    assert min(thins) >= 1


@pytest.mark.parametrize("seed", range(3))
def test_a_lone_slow_parameter_counts_up_to_three_medians(seed):
    # Within three medians the slowest parameter sets thin: tau 9 among tau 4.
    draws = np.hstack([ar1(0.6, 4000, 30, seed), ar1(0.8, 4000, 1, seed + 10)])
    assert 8 <= AutoThin(20)(draws, None) <= 14
    # Beyond, thin is three medians (tau 19 among independent draws: thin 3 or 4; its
    # ESS falls short of independence, which the convergence check reports).
    draws = np.hstack([ar1(0.0, 4000, 30, seed), ar1(0.9, 4000, 1, seed + 10)])
    assert 3 <= AutoThin(20)(draws, None) <= 4


@pytest.mark.parametrize("seed", range(3))
def test_cheap_iterations_thin_slow_chains_as_far_as_the_goal_needs(seed):
    # The subsampling tests' and Firefly's rule: to independence up to 10, and beyond as
    # far as 250 a chain from 1,000 kept draws needs (a quarter of tau), up to 50.
    rule = AutoThin(10, ess_goal=250, n_draws=1000, goal_max_thin=50)
    assert rule(ar1(0.8, 2000, 3, seed), None) == AutoThin(10)(ar1(0.8, 2000, 3, seed), None)
    # tau = 199: the goal's thin is about 50 (the estimate from 1,000 draws errs); beyond
    # the independent cap of 10 either way.
    slow = rule(ar1(0.99, 2000, 3, seed), None)
    assert 25 <= slow <= 50
    # tau = 999: the cap.
    assert rule(ar1(0.998, 2000, 3, seed), None) == 50
    # Independent draws: thin 1 or 2 (tau estimated near 1), as to independence.
    assert rule(np.random.default_rng(seed).standard_normal((2000, 3)), None) <= 2


@pytest.mark.parametrize("seed", range(3))
def test_typical_reads_the_median_parameter(seed):
    # n_draws="auto"'s full-data rule: 30 parameters of tau = 4 and one of tau = 9 thin
    # by the median's time (4, estimated 4 to 5; the slowest's rule gives 8 to 14),
    # whatever the goal (the rounds reach it).
    draws = np.hstack([ar1(0.6, 4000, 30, seed), ar1(0.8, 4000, 1, seed + 10)])
    assert 8 <= AutoThin(20)(draws, None) <= 14
    typical = AutoThin(20, typical=True)(draws, None)
    assert 4 <= typical <= 5
    assert AutoThin(20, ess_goal=100, n_draws=150, typical=True)(draws, None) == typical
    assert AutoThin(3, typical=True)(draws, None) == 3  # the cap
    # Independent draws: thin 1 or 2 (a time estimated near 1, rounded up).
    independent = np.random.default_rng(seed).standard_normal((4000, 31))
    assert AutoThin(20, typical=True)(independent, None) <= 2


def test_full_data_tests_thin_by_the_median_under_n_draws_auto():
    from skbayes_mh._core.auto import choose_acceptance, choose_thin

    exact = choose_acceptance("metropolis", 569, 31)
    assert choose_thin("auto", exact, 569, 31, 150, ess_goal=120.0).typical
    assert not choose_thin("auto", exact, 569, 31, 1000).typical
    minibatch = choose_acceptance("minibatch", 10**6, 11)
    assert not choose_thin("auto", minibatch, 10**6, 11, 150, ess_goal=120.0).typical
