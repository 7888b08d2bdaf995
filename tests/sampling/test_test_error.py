"""The error a fit of an approximate test reports (``diagnostics_.test_error``): the first
Edgeworth term of the normal approximation of a minibatch mean, against the gap measured on
simulated means; the figures a fit reports; the test run again at the chains' moves when
the estimate passes the threshold; and the warning past it."""
import warnings

import numpy as np
import pytest
from scipy import stats
from sklearn.exceptions import ConvergenceWarning

from skbayes_mh import MinibatchMHLogisticRegression, RobustTRegression
from skbayes_mh._core.convergence import TEST_ERROR_WARNING, normality_error
from skbayes_mh.acceptance import Austerity


@pytest.mark.parametrize("batch", [30, 100])
@pytest.mark.parametrize("shape", [1.0, 4.0])
def test_the_edgeworth_estimate_matches_the_gap_of_a_skewed_mean(batch, shape):
    # Means of gamma rows (skewness 2 / sqrt(shape)): the largest gap between the
    # standardised mean's distribution and the normal, measured on 200,000 means, is the
    # estimate to 15% (plus the measurement's noise, about 0.003).
    rng = np.random.default_rng(1)
    n = 200_000
    means = rng.gamma(shape, size=(n, batch)).mean(axis=1)
    z = np.sort((means - shape) / np.sqrt(shape / batch))
    gap = np.max(np.abs(np.arange(1, n + 1) / n - stats.norm.cdf(z)))
    estimate = float(normality_error(2.0 / np.sqrt(shape), batch, 10**12))
    assert abs(estimate - gap) < 0.15 * gap + 0.003, (estimate, gap)


def test_without_replacement_the_mean_loses_its_skewness():
    # The mean of b of N rows drawn without replacement has skewness gamma (N - 2b) / (N - 2)
    # sqrt((N - 1) / (N - b)) / sqrt(b): none at b = N / 2, and every row is exact.
    assert float(normality_error(2.0, 100, 200)) == 0.0
    assert float(normality_error(2.0, 200, 200)) == 0.0
    assert float(normality_error(2.0, 100, 10**9)) > float(normality_error(2.0, 100, 1000))
    rng = np.random.default_rng(2)
    population = rng.exponential(size=300)
    means = np.array([rng.choice(population, 60, replace=False).mean()
                      for _ in range(40_000)])
    shrink = float(normality_error(1.0, 60, 300) / normality_error(1.0, 60, 10**12))
    assert stats.skew(means) == pytest.approx(
        stats.skew(population) / np.sqrt(60) * shrink, rel=0.1)


@pytest.fixture(scope="module")
def tall():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(20_000, 5))
    y = (rng.random(20_000) < 1.0 / (1.0 + np.exp(-X @ np.ones(5)))).astype(int)
    return X, y


#: Chains long enough that the moves a test's error is estimated (and measured) at are the
#: posterior's, past the warm-up; seeded.
POSTERIOR_MOVES = dict(n_draws=300, n_warmup=300, n_chains=2, random_state=0)


def test_a_default_fit_reports_its_error_without_warning(tall):
    X, y = tall
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        clf = MinibatchMHLogisticRegression(random_state=0).fit(X, y)
    found = clf.diagnostics_.test_error
    assert found.test == "minibatch"
    assert 0 < found.normality < TEST_ERROR_WARNING
    assert found.per_test == pytest.approx(found.design + found.normality)
    assert found.design < 1e-5  # the correction distribution's sup-error
    read = clf.posterior_["n_data_read"] / clf.thin_[:, None]
    assert found.rows_per_test == pytest.approx(read.mean())
    assert found.normality == pytest.approx(float(normality_error(
        found.skewness, found.rows_per_test, X.shape[0])))
    exact = MinibatchMHLogisticRegression(acceptance="metropolis", **POSTERIOR_MOVES).fit(
        X[:2000], y[:2000])
    assert "test_error" not in exact.diagnostics_


@pytest.mark.slow
def test_austerity_without_control_variates_warns_with_its_predicted_error(tall):
    # Without control variates each test reads about a third of the rows and still errs
    # in several decisions in a hundred (its own analysis, at the fit's moves): past the
    # threshold. Every 8th state kept (most kept pairs then differ, as the measurement
    # needs), not the fit's own thinning of about 35, which took 8 times longer.
    X, y = tall
    with pytest.warns(ConvergenceWarning, match=r"austerity test's decisions may differ"):
        clf = MinibatchMHLogisticRegression(acceptance=Austerity(control_variates=False),
                                            proposal="random_walk", thin=8,
                                            **POSTERIOR_MOVES).fit(X, y)
    found = clf.diagnostics_.test_error
    assert found.design > TEST_ERROR_WARNING
    assert found.per_test > TEST_ERROR_WARNING
    # Past the threshold the test was run again at the fit's moves: its measured error is
    # what its own analysis predicted (0.100 against 0.093), within the trials' noise (200
    # a move: a binomial sd up to 0.035 a move, over 9 moves).
    assert found.per_test == found.measured and found.n_moves > 0
    assert abs(found.measured - found.design) < 0.05


def far_rows(n=20_000, seed=0):
    """A robust regression's data with 0.2% of the rows forty times farther out in X: the
    rows' log ratios less their control variates, dominated by one of those rows at a time,
    have skewness near 50."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    X[:int(0.002 * n)] *= 40.0
    return X, X @ np.array([1.0, -0.5, 0.25]) + rng.standard_t(4, n)


@pytest.mark.slow
def test_an_estimate_past_the_threshold_is_measured_and_a_small_error_does_not_warn():
    # The Edgeworth term is outside its reach at skewness 50 over 135 rows (0.27 here):
    # run again 1,000 times at each of the chains' moves, the minibatch test's acceptance
    # frequency is the exact test's S(Delta) within the trials' noise (the measurement's
    # debiased root-mean-square: under 0.005 at seeds 0 and 1), and the fit does not warn.
    X, y = far_rows()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        reg = RobustTRegression(random_state=0).fit(X, y)
    found = reg.diagnostics_.test_error
    assert found.test == "minibatch"
    assert found.skewness > 20 and found.estimated > TEST_ERROR_WARNING
    assert found.n_moves > 0 and found.per_test == found.measured < 0.02
