"""``sample_weight``: each row's log-likelihood is multiplied by its weight, in every
acceptance test, in Firefly's bounds and in the autoscaled priors. Integer weights must give
the posterior of the data with each row repeated that many times (within Monte Carlo
error), weights of one the unweighted fit draw for draw."""
import numpy as np
import pytest

from skbayes_mh import MinibatchMHLogisticRegression, RobustTRegression

Z_LIMIT = 4.0


def min_ess(estimator):
    return min(float(np.min(v)) for v in estimator.diagnostics_["ess_bulk"].values())


def flat_draws(estimator):
    return estimator._theta_draws().reshape(-1, estimator._theta_draws().shape[-1])


def assert_same_posterior(a, b):
    """Means within Z_LIMIT Monte Carlo errors of their difference, sds within Z_LIMIT
    relative errors."""
    x, y = flat_draws(a), flat_draws(b)
    error = np.sqrt(x.var(axis=0) / min_ess(a) + y.var(axis=0) / min_ess(b))
    assert np.all(np.abs(x.mean(axis=0) - y.mean(axis=0)) < Z_LIMIT * error), \
        (x.mean(axis=0) - y.mean(axis=0)) / error
    ess = min(min_ess(a), min_ess(b))
    assert np.all(np.abs(y.std(axis=0) / x.std(axis=0) - 1) < Z_LIMIT / np.sqrt(ess))


def logistic_data(n_rows, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, 2)) * [1.0, 3.0] + [0.5, -1.0]
    y = (rng.random(n_rows) < 1 / (1 + np.exp(-X @ [1.0, -0.4] - 0.2))).astype(int)
    weights = rng.integers(1, 4, size=n_rows)
    return X, y, weights


@pytest.mark.parametrize("acceptance", ["metropolis", "minibatch", "firefly"])
def test_integer_weights_are_repeated_rows_logistic(acceptance):
    X, y, weights = logistic_data(3000 if acceptance == "minibatch" else 300)
    settings = dict(acceptance=acceptance, n_draws=2000, random_state=0)
    weighted = MinibatchMHLogisticRegression(**settings).fit(X, y, sample_weight=weights)
    repeated = MinibatchMHLogisticRegression(**settings).fit(
        np.repeat(X, weights, axis=0), np.repeat(y, weights))
    assert_same_posterior(weighted, repeated)


def test_integer_weights_are_repeated_rows_robust_firefly():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 2)) * [2.0, 0.5]
    y = X @ [1.0, -2.0] + 0.5 + 0.5 * rng.standard_t(4, size=300)
    weights = rng.integers(1, 4, size=300)
    settings = dict(acceptance="firefly", n_draws=2000, random_state=0)
    weighted = RobustTRegression(**settings).fit(X, y, sample_weight=weights)
    repeated = RobustTRegression(**settings).fit(np.repeat(X, weights, axis=0),
                                                 np.repeat(y, weights))
    assert_same_posterior(weighted, repeated)


def test_unit_weights_give_the_unweighted_chains():
    """The same chains up to rounding (the weighted sums differ in their last bits)."""
    X, y, _ = logistic_data(200)
    settings = dict(n_draws=100, n_warmup=100, n_chains=2, random_state=0)
    plain = MinibatchMHLogisticRegression(**settings).fit(X, y)
    ones = MinibatchMHLogisticRegression(**settings).fit(X, y, sample_weight=np.ones(200))
    np.testing.assert_allclose(plain.posterior_["coef"], ones.posterior_["coef"], rtol=1e-9,
                               atol=1e-12)


def test_bad_weights_are_refused_by_name():
    X, y, _ = logistic_data(50)
    clf = MinibatchMHLogisticRegression(n_draws=20, n_warmup=20)
    with pytest.raises(ValueError, match="Negative values in data passed to `sample_weight`"):
        clf.fit(X, y, sample_weight=np.r_[-1.0, np.ones(49)])
    with pytest.raises(ValueError, match="at least one non-zero"):
        clf.fit(X, y, sample_weight=np.zeros(50))
    with pytest.raises(ValueError, match="sample_weight"):
        clf.fit(X, y, sample_weight=np.ones(49))
    with pytest.raises(ValueError, match="sample_weight"):
        clf.fit(X, y, sample_weight=np.r_[np.nan, np.ones(49)])
