"""Each small numba kernel against a NumPy/SciPy reference."""
import math

import numpy as np
import pytest
from scipy import stats
from scipy.special import log_expit

from skbayes_mh._kernels._common import (draw_without_replacement, log_sigmoid, loglik_sum,
                                         sample_discrete)
from skbayes_mh._kernels._jit import STATUS_BAD_LOGLIK, STATUS_OK
from skbayes_mh._kernels.minibatch import berry_esseen_bound
from skbayes_mh._validation import read_only

from _models import gaussian_mean_loglik, nan_beyond_one_loglik, zero_beyond_one_loglik


def test_loglik_sum_matches_numpy():
    x = np.random.default_rng(0).normal(size=(1000, 1))
    total, status = loglik_sum(gaussian_mean_loglik, read_only(x), np.array([0.3]))
    assert status == STATUS_OK
    assert total == pytest.approx(np.sum(-0.5 * (x[:, 0] - 0.3) ** 2), rel=1e-12)


def test_loglik_sum_flags_nan_and_passes_minus_inf():
    x = read_only(np.zeros((10, 1)))
    assert loglik_sum(nan_beyond_one_loglik, x, np.array([2.0]))[1] == STATUS_BAD_LOGLIK
    total, status = loglik_sum(zero_beyond_one_loglik, x, np.array([2.0]))
    assert status == STATUS_OK and total == -math.inf


def test_draw_without_replacement_gives_uniform_distinct_rows():
    n, k, trials = 50, 7, 20_000
    rng = np.random.default_rng(1)
    pool = np.arange(n)
    counts = np.zeros(n)
    for _ in range(trials):
        draw_without_replacement(pool, 0, 3, rng)
        draw_without_replacement(pool, 3, k - 3, rng)  # growing a batch keeps it distinct
        chosen = pool[:k]
        assert np.unique(chosen).size == k
        counts[chosen] += 1
    assert sorted(pool) == list(range(n))
    # Every row is included with probability k / n.
    assert stats.chisquare(counts).pvalue > 1e-3
    assert counts.sum() == trials * k


@pytest.mark.parametrize("x", [-800.0, -30.0, -1.0, 0.0, 2.5, 40.0, 800.0])
def test_log_sigmoid_matches_scipy(x):
    assert log_sigmoid(x) == pytest.approx(float(log_expit(x)), rel=1e-14, abs=1e-300)


def test_sample_discrete_frequencies_match_weights():
    support = np.array([-2.0, 0.0, 1.0, 5.0])
    weights = np.array([0.1, 0.2, 0.3, 0.4])
    rng = np.random.default_rng(2)
    draws = np.array([sample_discrete(support, np.cumsum(weights), rng) for _ in range(40_000)])
    counts = np.array([(draws == s).sum() for s in support])
    assert counts.sum() == draws.size
    assert stats.chisquare(counts, 40_000 * weights).pvalue > 1e-3


def test_berry_esseen_bound_matches_numpy():
    values = np.random.default_rng(3).exponential(size=200)
    count = 150
    x = values[:count]
    z = np.abs(x - x.mean()) / x.std()
    expected = (6.4 * np.mean(z**3) + 2.0 * np.mean(z)) / np.sqrt(count)
    assert berry_esseen_bound(values, count, x.mean()) == pytest.approx(expected, rel=1e-12)
    assert berry_esseen_bound(np.ones(10), 10, 1.0) == 0.0


def test_logistic_loglik_matches_numpy():
    from skbayes_mh.models.logistic import logistic_loglik

    rng = np.random.default_rng(4)
    X = rng.normal(size=(50, 30)) * 3
    y = rng.integers(0, 2, 50)
    theta = rng.normal(size=30)
    data = read_only(np.column_stack([X, y]).astype(float))
    z = X @ theta
    expected = y * log_expit(z) + (1 - y) * log_expit(-z)
    got = np.array([logistic_loglik(theta, data, i) for i in range(50)])
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_prefetch_row_changes_nothing():
    from skbayes_mh._kernels._common import prefetch_row

    data = read_only(np.arange(20.0).reshape(4, 5))
    for i in range(4):
        prefetch_row(data, i)
    np.testing.assert_array_equal(data, np.arange(20.0).reshape(4, 5))


def test_propose_with_a_cholesky_factor_has_that_covariance():
    from skbayes_mh._kernels.chain import propose

    covariance = np.array([[2.0, 0.8, 0.1], [0.8, 1.0, -0.3], [0.1, -0.3, 0.5]])
    factor = np.linalg.cholesky(covariance)
    theta = np.array([1.0, -2.0, 0.5])
    rng = np.random.default_rng(5)
    out = np.empty(3)
    draws = np.empty((40_000, 3))
    for k in range(draws.shape[0]):
        propose(theta, np.ones(3), factor, rng, out)
        draws[k] = out
    np.testing.assert_allclose(draws.mean(axis=0), theta, atol=4 * np.sqrt(2.0 / 40_000))
    # Entries of a sample covariance of 40,000 draws: standard error below 0.015 here.
    np.testing.assert_allclose(np.cov(draws.T), covariance, atol=0.06)
    diagonal = np.empty((40_000, 3))
    for k in range(diagonal.shape[0]):
        propose(theta, np.array([0.1, 1.0, 3.0]), np.empty((0, 0)), rng, out)
        diagonal[k] = out
    np.testing.assert_allclose(diagonal.std(axis=0), [0.1, 1.0, 3.0], rtol=0.03)


def test_builtin_priors_match_scipy():
    from scipy.stats import laplace, norm

    from skbayes_mh._kernels.priors import GAUSSIAN, LAPLACE, NO_PRIOR, builtin_log_prior

    theta = np.array([0.3, -2.0, 5.0])
    scales = np.array([1.0, 0.5, 10.0])
    assert builtin_log_prior(NO_PRIOR, scales, theta) == 0.0
    for kind, reference in ((GAUSSIAN, norm), (LAPLACE, laplace)):
        a = builtin_log_prior(kind, scales, theta)
        b = builtin_log_prior(kind, scales, np.zeros(3))
        expected = (reference.logpdf(theta, scale=scales) - reference.logpdf(0, scale=scales)).sum()
        assert a - b == pytest.approx(expected, rel=1e-12)


def test_recorded_log_posterior_of_exact_tests():
    from skbayes_mh import sample

    from _models import standard_normal_log_prior

    x = np.random.default_rng(6).normal(size=(300, 1))
    result = sample(gaussian_mean_loglik, x, [0.0], step_size=0.05, acceptance="barker",
                    log_prior=standard_normal_log_prior, temperature=2.0, n_samples=50,
                    random_state=0)
    theta = result.draws[:, 0]
    expected = -0.5 * theta**2 + np.array([-0.5 * np.sum((x[:, 0] - t) ** 2) for t in theta]) / 2
    np.testing.assert_allclose(result.log_posterior, expected, rtol=1e-10)
    minibatch = sample(gaussian_mean_loglik, x, [0.0], step_size=0.05, n_samples=5,
                       random_state=0)
    assert np.all(np.isnan(minibatch.log_posterior))
