"""The Austerity test (Korattikara, Chen, Welling): its t-tail against SciPy, its limit
epsilon -> 0 (the exact Metropolis-Hastings test), and its decisions where the t-test is
confident."""
import numpy as np
import pytest
from scipy import stats

from skbayes_mh import acceptance_probability
from skbayes_mh._kernels.special import student_t_sf
from skbayes_mh.acceptance import Austerity

from _models import linear_loglik, per_datum_ratios, rate_tolerance

N = 1000
N_TRIALS = 20_000


def ratios(delta, spread, seed=0):
    return per_datum_ratios(delta, spread, N, seed=seed)


def tolerance(p):
    return rate_tolerance(p, N_TRIALS)


@pytest.mark.parametrize("dof", [1.0, 2.0, 5.0, 49.0, 499.0, 20_000.0])
@pytest.mark.parametrize("t", [-4.0, -0.5, 0.0, 0.7, 2.0, 6.0, 30.0])
def test_student_t_tail_matches_scipy(t, dof):
    assert student_t_sf(t, dof) == pytest.approx(stats.t.sf(t, dof), rel=1e-9, abs=1e-300)


@pytest.mark.parametrize("delta", [-3.0, -1.0, -0.2, 0.5])
@pytest.mark.parametrize("spread", [1e-2, 5e-2])
def test_tiny_epsilon_is_the_exact_metropolis_test(spread, delta):
    p, rows = acceptance_probability(linear_loglik, ratios(delta, spread), [0.0], [1.0],
                                     acceptance=Austerity(epsilon=1e-12, batch_size=50),
                                     n_trials=N_TRIALS, random_state=2)
    exact = min(1.0, np.exp(delta))
    assert abs(p - exact) <= tolerance(exact)


@pytest.mark.parametrize("delta", [-3.0, -1.0, 0.5, 2.0])
def test_confident_decisions_follow_metropolis(delta):
    # Per-datum ratios with little spread: the first batch of 50 decides almost always.
    test = Austerity(epsilon=0.05, batch_size=50)
    p, rows = acceptance_probability(linear_loglik, ratios(delta, 3e-4), [0.0], [1.0],
                                     acceptance=test, n_trials=N_TRIALS, random_state=3)
    exact = min(1.0, np.exp(delta))
    assert abs(p - exact) <= tolerance(exact) + test.stated_error()
    assert rows < 2 * 50


def test_reads_less_than_the_full_data_and_more_as_epsilon_falls():
    x = ratios(-1.0, 1e-2)
    _, loose = acceptance_probability(linear_loglik, x, [0.0], [1.0],
                                      acceptance=Austerity(epsilon=0.1, batch_size=50),
                                      n_trials=5000, random_state=4)
    _, strict = acceptance_probability(linear_loglik, x, [0.0], [1.0],
                                       acceptance=Austerity(epsilon=0.001, batch_size=50),
                                       n_trials=5000, random_state=4)
    assert loose < strict < N


@pytest.mark.parametrize("params, message", [
    (dict(epsilon=0.0), "epsilon"), (dict(epsilon=1.0), "epsilon"),
    (dict(batch_size=1), "batch_size"), (dict(batch_size=0.5), "batch_size"),
])
def test_bad_parameters(params, message):
    with pytest.raises(ValueError, match=message):
        Austerity(**params).validate()
