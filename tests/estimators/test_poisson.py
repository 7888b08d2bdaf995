"""MinibatchMHPoissonRegression: the link against SciPy, scikit-learn citizenship, agreement
with a long exact chain and with scikit-learn's penalised fit for large N, predictions, and
the refusal of Firefly."""
import numpy as np
import pytest
from scipy.stats import poisson
from sklearn.linear_model import PoissonRegressor

from skbayes_mh import MinibatchMHPoissonRegression, NegativeBinomialRegression
from skbayes_mh.models import PoissonModel

from _models import FAST, linear_target, long_metropolis_fit
from _stats import Z_LIMIT, assert_same_distribution


def counts(n, seed=0, weights=(0.3, -0.2), intercept=1.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, len(weights)))
    return X, rng.poisson(np.exp(X @ np.array(weights) + intercept)).astype(float)


def test_loglik_and_derivatives_match_scipy_and_finite_differences():
    X, y = counts(300)
    target = linear_target(PoissonModel(), X, y, np.ones(3))
    theta = np.array([0.25, -0.1, 0.9])
    value, gradient, hessian = target.model.loglik_derivatives(target.data, theta, 2)
    rate = np.exp(X @ theta[:2] + theta[2])
    # The link leaves out -log y!, a constant in theta.
    expected = poisson.logpmf(y, rate).sum() + np.sum([np.sum(np.log(np.arange(1, k + 1)))
                                                        for k in y.astype(int)])
    assert value == pytest.approx(expected, rel=1e-10)
    design = np.column_stack([X, np.ones(len(y))])
    np.testing.assert_allclose(gradient, design.T @ (y - rate), rtol=1e-10)
    np.testing.assert_allclose(hessian, -(design * rate[:, None]).T @ design, rtol=1e-10)


@pytest.fixture(scope="module")
def long_exact_chain():
    """A long exact (Metropolis) fit of the estimator's own model, and its data."""
    X, y = counts(400, seed=1)
    return X, y, long_metropolis_fit(MinibatchMHPoissonRegression, X, y)


@pytest.mark.slow
@pytest.mark.parametrize("acceptance", ["barker", "minibatch"])
def test_chains_agree_with_a_long_exact_chain(long_exact_chain, acceptance):
    X, y, reference = long_exact_chain
    reg = MinibatchMHPoissonRegression(acceptance=acceptance, n_draws=20_000, n_warmup=2000,
                                       n_chains=2, random_state=2).fit(X, y)
    assert_same_distribution(reg._theta_draws(), reference, label=acceptance)


def test_large_n_posterior_mean_is_scikit_learns_penalised_fit():
    # As N grows the posterior concentrates at the MAP, which is scikit-learn's penalised
    # maximum-likelihood fit when the penalties match: its objective is the mean deviance
    # / 2 + alpha |w|^2 / 2, ours the summed negative log-likelihood + |w|^2 / (2 s^2), so
    # alpha = 1 / (N s^2) (scikit-learn leaves the intercept unpenalised: a wide prior).
    n, prior_scale = 50_000, 0.5
    X, y = counts(n, seed=3)
    reg = MinibatchMHPoissonRegression(prior_scale=prior_scale, intercept_prior_scale=1e3,
                                       autoscale=False, n_draws=500, n_warmup=500, n_chains=2,
                                       random_state=0).fit(X, y)
    sklearn = PoissonRegressor(alpha=1.0 / (n * prior_scale**2), tol=1e-10,
                               max_iter=1000).fit(X, y)
    sd = reg._theta_draws().std(axis=(0, 1))
    difference = np.append(reg.coef_ - sklearn.coef_, reg.intercept_ - sklearn.intercept_)
    # The posterior mean and the mode differ by O(1/N); well within 0.25 posterior sd here.
    assert np.all(np.abs(difference) < 0.25 * sd), difference / sd


def test_predictions_are_posterior_predictive_means():
    X, y = counts(500, seed=4)
    reg = MinibatchMHPoissonRegression(random_state=0, **FAST).fit(X, y)
    coef = reg.posterior_.get("coef", flat=True)
    intercept = reg.posterior_.get("intercept", flat=True)
    rate = np.exp(X[:6] @ coef.T + intercept)
    mean, std = reg.predict(X[:6], return_std=True)
    np.testing.assert_allclose(mean, rate.mean(axis=1), rtol=1e-12)
    np.testing.assert_allclose(std, np.sqrt(rate.mean(axis=1) + rate.var(axis=1)), rtol=1e-12)
    # predict() alone: within predict_tol (relative above 1) of the mean over every draw.
    scale = np.maximum(1.0, mean)
    assert np.all(np.abs(reg.predict(X[:6]) - mean) <= reg.predict_tol * scale * (1 + 1e-9))
    np.testing.assert_allclose(reg.set_params(predict_tol=None).predict(X[:6]), mean,
                               rtol=1e-12)


def test_firefly_is_refused_and_bad_counts_too():
    X, y = counts(100)
    with pytest.raises(ValueError, match="no global quadratic lower bound"):
        MinibatchMHPoissonRegression(acceptance="firefly", **FAST).fit(X, y)
    with pytest.raises(ValueError, match="non-negative"):
        MinibatchMHPoissonRegression(**FAST).fit(X, y - 5)


def poisson_d2(y, mean, weights):
    """``1 - D(y, mean) / D(y, ybar)`` with the weighted Poisson deviance
    ``D = 2 sum w (y log(y / mu) - y + mu)`` (``y log y = 0`` at 0), written out here."""
    def deviance(mu):
        y_log_y = np.where(y > 0, y * np.log(np.where(y > 0, y, 1.0) / mu), 0.0)
        return 2.0 * np.sum(weights * (y_log_y - y + mu))
    return 1.0 - deviance(mean) / deviance(np.full_like(mean, np.average(y, weights=weights)))


@pytest.mark.parametrize("estimator", [MinibatchMHPoissonRegression, NegativeBinomialRegression])
def test_count_regressors_score_poisson_deviance_explained_as_scikit_learn(estimator):
    # The score PoissonRegressor gives (D^2), not R^2: cross-validation ranks both on one
    # scale. Its predictive mean is that of the draws (tested above), so the score of a
    # fit near the maximum-likelihood one is near scikit-learn's unpenalised score.
    X, y = counts(2000, seed=5)
    X_test, y_test = counts(1000, seed=6)
    weights = np.random.default_rng(7).uniform(0.5, 2.0, len(y_test))
    reg = estimator(random_state=0, **FAST).fit(X, y)
    for w in (None, weights):
        expected = poisson_d2(y_test, reg.predict(X_test), np.ones(len(y_test)) if w is None
                              else w)
        assert reg.score(X_test, y_test, sample_weight=w) == pytest.approx(expected, rel=1e-9)
    sklearn = PoissonRegressor(alpha=0.0).fit(X, y)
    assert sklearn.score(X_test, y_test) == pytest.approx(
        poisson_d2(y_test, sklearn.predict(X_test), np.ones(len(y_test))), rel=1e-9)
    # On one scale: scikit-learn's is 0.226 here, ours within 3.6e-4 of it over four seeds
    # of each estimator (its predictive mean is near the maximum-likelihood fit's).
    assert abs(reg.score(X_test, y_test) - sklearn.score(X_test, y_test)) < 0.003
    with pytest.raises(ValueError, match="non-negative"):
        reg.score(X_test, y_test - 5)


@pytest.mark.slow
def test_rates_weighted_by_their_exposure_are_counts_with_an_offset():
    """Counts over an exposure (time at risk, area), as scikit-learn's ``PoissonRegressor``
    takes them: ``y = counts / exposure`` with ``sample_weight=exposure`` is the Poisson
    likelihood of the counts with offset ``log(exposure)``, up to a constant. On 100,000
    rows (the minibatch test with control variates) the posterior mean is statsmodels'
    ``GLM`` Poisson fit with that ``exposure`` within Monte Carlo error, and the sds are
    its standard errors within the error of an sd estimate."""
    sm = pytest.importorskip("statsmodels.api", reason="statsmodels is a test dependency")
    rng = np.random.default_rng(5)
    n = 100_000
    X = rng.normal(size=(n, 2))
    exposure = rng.uniform(0.1, 5.0, size=n)
    y = rng.poisson(exposure * np.exp(X @ [0.3, -0.2] + 0.5))
    reg = MinibatchMHPoissonRegression(random_state=0).fit(X, y / exposure,
                                                           sample_weight=exposure)
    assert reg.acceptance_.name == "minibatch"
    glm = sm.GLM(y, sm.add_constant(X), family=sm.families.Poisson(), exposure=exposure).fit()
    draws = np.column_stack([reg.posterior_.get("intercept", flat=True),
                             reg.posterior_.get("coef", flat=True)])
    ess = min(float(np.min(v)) for v in reg.diagnostics_["ess_bulk"].values())
    z = (draws.mean(axis=0) - glm.params) / (draws.std(axis=0) / np.sqrt(ess))
    assert np.all(np.abs(z) < Z_LIMIT), z
    ratio = draws.std(axis=0) / glm.bse
    assert np.all(np.abs(ratio - 1) < Z_LIMIT * np.sqrt(0.5 / ess)), ratio
    # The expected count of a row is its exposure times the predicted rate.
    expected = exposure[:5] * reg.predict(X[:5])
    np.testing.assert_allclose(expected, glm.predict(sm.add_constant(X[:5]),
                                                     exposure=exposure[:5]), rtol=0.01)
