"""The confidence sampler (Bardenet, Doucet, Holmes): its bound against the formula, its
decisions against the exact test within delta, its limit delta -> 0, and its use of an
analytic range bound."""
import math

import numpy as np
import pytest

from skbayes_mh import MinibatchMHLogisticRegression, acceptance_probability
from skbayes_mh._kernels.confidence import bernstein_serfling_bound
from skbayes_mh.acceptance import ConfidenceSampler

from _models import linear_loglik, per_datum_ratios, rate_tolerance

N = 1000
N_TRIALS = 20_000


def test_bernstein_serfling_bound_formula():
    kappa = 7 / 3 + 3 / math.sqrt(2)
    for n, rho in ((100, 1 - 99 / 1000), (800, (1 - 0.8) * (1 + 1 / 800))):
        expected = 0.3 * math.sqrt(2 * rho * math.log(10 / 0.01) / n) + kappa * 2.0 * math.log(10 / 0.01) / n
        assert bernstein_serfling_bound(n, 1000, 0.3, 2.0, 0.01) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("delta", [-3.0, -1.0, -0.2, 0.5])
@pytest.mark.parametrize("spread", [3e-4, 1e-2])
def test_decisions_within_delta_of_the_exact_test(spread, delta):
    x = per_datum_ratios(delta, spread, N)
    # theta' - theta = 1 and |l_i(a) - l_i(b)| = |x_i| |a - b|: L = max |x_i|.
    test = ConfidenceSampler(delta=0.05, batch_size=50, lipschitz=float(np.abs(x).max()))
    p, rows = acceptance_probability(linear_loglik, x, [0.0], [1.0], acceptance=test,
                                     n_trials=N_TRIALS, random_state=5)
    exact = min(1.0, np.exp(delta))
    assert abs(p - exact) <= rate_tolerance(exact, N_TRIALS) + test.stated_error()
    assert rows <= N


def test_tiny_delta_is_the_exact_metropolis_test():
    x = per_datum_ratios(-1.0, 1e-2, N)
    test = ConfidenceSampler(delta=1e-12, lipschitz=float(np.abs(x).max()))
    p, _ = acceptance_probability(linear_loglik, x, [0.0], [1.0], acceptance=test,
                                  n_trials=N_TRIALS, random_state=6)
    assert abs(p - math.exp(-1.0)) <= rate_tolerance(math.exp(-1.0), N_TRIALS)


def test_reads_a_fraction_of_tall_data():
    # The bound's range term falls like 1/n, so the saving shows on taller data: 20,000 rows.
    n_data = 20_000
    z = np.random.default_rng(9).normal(size=n_data)
    x = (-1.0 / n_data + 1e-5 * (z - z.mean()) / z.std())[:, None]
    test = ConfidenceSampler(delta=0.01, batch_size=50, lipschitz=float(np.abs(x).max()))
    p, rows = acceptance_probability(linear_loglik, x, [0.0], [1.0], acceptance=test,
                                     n_trials=2000, random_state=7)
    assert rows < n_data / 4
    assert abs(p - math.exp(-1.0)) <= 4 * math.sqrt(0.25 / 2000) + test.stated_error()


def test_estimator_supplies_the_logistic_bound():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(3000, 3))
    y = (X @ [1.0, -1.0, 0.5] + rng.logistic(size=3000) > 0).astype(int)
    clf = MinibatchMHLogisticRegression(acceptance="confidence", n_draws=200, n_warmup=200,
                                        n_chains=2, random_state=0).fit(X, y)
    design = np.column_stack([X, np.ones(len(X))])
    assert clf.acceptance_.lipschitz == pytest.approx(np.sqrt((design**2).sum(axis=1).max()))
    assert clf.score(X, y) > 0.7


@pytest.mark.parametrize("params, message", [
    (dict(delta=0.0), "delta"), (dict(delta=1.0), "delta"), (dict(gamma=1.0), "gamma"),
    (dict(p=1.0), "'p'"), (dict(batch_size=1), "batch_size"), (dict(lipschitz=-1.0), "lipschitz"),
])
def test_bad_parameters(params, message):
    with pytest.raises(ValueError, match=message):
        ConfidenceSampler(**params).validate()
