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


@pytest.mark.parametrize("dof", [1.0, 2.0, 5.0, 49.0, 499.0, 20_000.0])
@pytest.mark.parametrize("t", [-4.0, -0.5, 0.0, 0.7, 2.0, 6.0, 30.0])
def test_student_t_tail_matches_scipy(t, dof):
    assert student_t_sf(t, dof) == pytest.approx(stats.t.sf(t, dof), rel=1e-9, abs=1e-300)


@pytest.mark.slow
@pytest.mark.parametrize("delta", [-3.0, -1.0, -0.2, 0.5])
@pytest.mark.parametrize("spread", [1e-2, 5e-2])
def test_tiny_epsilon_is_the_exact_metropolis_test(spread, delta):
    p, rows = acceptance_probability(linear_loglik, per_datum_ratios(delta, spread, N), [0.0],
                                     [1.0], acceptance=Austerity(epsilon=1e-12, batch_size=50),
                                     n_trials=N_TRIALS, random_state=2)
    exact = min(1.0, np.exp(delta))
    assert abs(p - exact) <= rate_tolerance(exact, N_TRIALS)


@pytest.mark.slow
@pytest.mark.parametrize("delta", [-3.0, -1.0, 0.0, 0.5, 2.0])
@pytest.mark.parametrize("spread", [3e-4, 1e-2, 5e-2, 2e-1])
def test_acceptance_follows_the_random_walk_error_analysis(spread, delta):
    # Epsilon is a per-stage level; the error in acceptance probability that results is the
    # random-walk prediction, at most the worst case (half the chance of stopping early).
    test = Austerity(epsilon=0.05, batch_size=50)
    p, rows = acceptance_probability(linear_loglik, per_datum_ratios(delta, spread, N), [0.0],
                                     [1.0], acceptance=test, n_trials=N_TRIALS, random_state=3)
    exact = min(1.0, np.exp(delta))
    predicted_error, predicted_rows = test.acceptance_error(delta, spread, N)
    assert abs(p - (exact + predicted_error)) <= rate_tolerance(exact + predicted_error, N_TRIALS)
    assert abs(p - exact) <= test.stated_error(N) + rate_tolerance(exact, N_TRIALS)
    assert rows == pytest.approx(predicted_rows, rel=0.05)


def test_worst_case_error_is_half_the_chance_of_an_early_stop():
    test = Austerity(epsilon=0.05, batch_size=50)
    errors, rows = test.decision_error([1e-9, 1.0, 40.0], N)
    assert errors[0] == pytest.approx(test.worst_case_error(N))
    assert errors[0] > errors[1] > errors[2] >= 0.0
    # Half the early stops are wrong at a zero effect: at least half the first stage's
    # two-sided level, at most half the union bound over the 19 stages before N.
    assert 0.5 * 2 * 0.05 < errors[0] < 0.5 * 19 * 2 * 0.05
    assert rows[2] == pytest.approx(50.0, rel=1e-6)
    # More data per stage and a stricter level can only lower the worst case.
    assert Austerity(epsilon=0.01, batch_size=50).worst_case_error(N) < errors[0]


@pytest.mark.slow
def test_random_walk_model_matches_a_simulated_walk():
    # The deterministic computation against walks simulated from the model's own bridge.
    n_data, batch_size, epsilon, effect = 600, 60, 0.05, 0.8
    test = Austerity(epsilon=epsilon, batch_size=batch_size)
    error, rows = test.decision_error(effect, n_data)
    n_walks = 60_000
    rng = np.random.default_rng(11)
    population = rng.normal(size=n_data)
    population = (population - population.mean()) / population.std()
    stage_rows = np.arange(batch_size, n_data, batch_size)
    thresholds = stats.t.isf(epsilon, stage_rows - 1)
    order = np.argsort(rng.random((n_walks, n_data)), axis=1)[:, :stage_rows[-1]]
    sums = np.cumsum(population[order], axis=1)[:, stage_rows - 1]
    se = np.sqrt((n_data - stage_rows) / (stage_rows * (n_data - 1.0)))
    t = (sums / stage_rows + effect / np.sqrt(n_data)) / se
    stopped = np.abs(t) > thresholds
    first = np.where(stopped.any(axis=1), stopped.argmax(axis=1), -1)
    wrong = (first >= 0) & (t[np.arange(n_walks), first] < 0)
    assert abs(wrong.mean() - error[0]) <= 4 * np.sqrt(error[0] * (1 - error[0]) / n_walks) + 2e-3
    used = np.where(first >= 0, stage_rows[first], n_data)
    assert used.mean() == pytest.approx(rows[0], rel=0.01)


@pytest.mark.slow
def test_conservative_design_meets_its_worst_case_error():
    test = Austerity.conservative(N, max_error=0.05, batch_sizes=[20, 50, 100],
                                  epsilons=[1e-3, 5e-3, 0.02], effects=np.linspace(0, 10, 11))
    assert test.worst_case_error(N) <= 0.05
    # Every cheaper candidate breaks the bound.
    rows = test.decision_error(np.linspace(0, 10, 11), N)[1].mean()
    for batch_size in (20, 50, 100):
        for epsilon in (1e-3, 5e-3, 0.02):
            other = Austerity(epsilon=epsilon, batch_size=batch_size)
            if other.decision_error(np.linspace(0, 10, 11), N)[1].mean() < rows:
                assert other.worst_case_error(N) > 0.05
    # And on the hardest case of the grid its measured error stays within the bound.
    p, _ = acceptance_probability(linear_loglik, per_datum_ratios(-3.0, 2e-1, N), [0.0], [1.0],
                                  acceptance=test, n_trials=N_TRIALS, random_state=12)
    assert abs(p - np.exp(-3.0)) <= 0.05 + rate_tolerance(np.exp(-3.0), N_TRIALS)
    with pytest.raises(ValueError, match="worst-case error"):
        Austerity.conservative(N, max_error=1e-4, batch_sizes=[50], epsilons=[0.1])


def test_reads_less_than_the_full_data_and_more_as_epsilon_falls():
    x = per_datum_ratios(-1.0, 1e-2, N)
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
