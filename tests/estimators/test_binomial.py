"""BinomialRegression: its log-likelihood against SciPy's binomial mass, its Firefly bounds
on proportions, agreement with a long exact chain of an independently written model (the
exact test, the minibatch test and Firefly), with statsmodels' maximum-likelihood fit on
tall data, its two ways of giving trials, predictions, a scikit-learn workflow, and its
refusals (the simulation-based calibration of its default fit is in
``tests/sampling/test_default_calibration.py``)."""
import math
import warnings

import numba
import numpy as np
import pytest
from scipy import stats
from scipy.special import expit
from sklearn.exceptions import ConvergenceWarning

from skbayes_mh import BinomialRegression
from skbayes_mh.models import BinomialModel

from _models import (FAST, firefly_row_terms, linear_target, long_metropolis_chain, min_ess,
                     stored_reference)
from _stats import Z_LIMIT, assert_same_distribution


def successes_of_trials(n, seed=0, weights=(0.5, -0.3), intercept=0.2, max_trials=20):
    """``X`` (n, len(weights)) and ``(successes, trials)`` per row, trials uniform in ``1 ..
    max_trials - 1``."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, len(weights)))
    trials = rng.integers(1, max_trials, size=n)
    successes = rng.binomial(trials, expit(X @ np.array(weights) + intercept))
    return X, np.column_stack([successes, trials])


def test_the_log_likelihood_is_the_binomial_mass_up_to_its_constant():
    """Trials times the per-trial log-likelihood of the proportion, plus ``log C(n, s)``, is
    SciPy's binomial log-mass; the simulated trial and the noise are one trial's."""
    model = BinomialModel()
    X, counts = successes_of_trials(50)
    successes, trials = counts.T
    eta = np.random.default_rng(1).normal(size=(3, 50, 1)) * 3
    per_trial = model.log_likelihood(eta, {}, successes / trials)
    constant = stats.binom.logpmf(successes, trials, 0.5) + trials * math.log(2.0)
    np.testing.assert_allclose(trials * per_trial + constant,
                               stats.binom.logpmf(successes, trials, expit(eta[..., 0])),
                               rtol=1e-10, atol=1e-10)
    flat = np.full((1, 200_000, 1), 0.4)
    draws = model.simulate(flat, {}, np.random.default_rng(2))[0]
    p = expit(0.4)
    assert set(np.unique(draws)) == {0.0, 1.0}
    assert abs(draws.mean() - p) < 4 * math.sqrt(p * (1 - p) / draws.size)
    assert model.noise_variance(flat[:, :1], {})[0, 0] == pytest.approx(p * (1 - p))


@pytest.mark.parametrize("bound", ["map", "untuned"])
def test_firefly_bounds_hold_below_every_proportion(bound):
    """The Jaakkola-Jordan bound, one ``xi`` for ``log S(eta)`` and ``log S(-eta)``, bounds
    their convex combination: every row's bound at or below its log-likelihood for
    fractional proportions, tight at the MAP."""
    X, counts = successes_of_trials(200, seed=3, max_trials=7)
    y = counts[:, 0] / counts[:, 1]
    assert np.any((y > 0) & (y < 1))
    target = linear_target(BinomialModel(), X, y, np.ones(3))
    bounds = target.model.firefly_bound(target.data, target.mean, bound, 1.0)
    design = np.column_stack([X, np.ones(len(y))])
    rng = np.random.default_rng(4)
    for theta in (target.mean, target.mean + rng.normal(size=3), target.mean * 3):
        values = firefly_row_terms(target, bounds, theta)
        eta = design @ theta
        np.testing.assert_allclose(values[:, 0], y * np.log(expit(eta))
                                   + (1 - y) * np.log(expit(-eta)), atol=1e-12)
        assert np.all(values[:, 1] <= values[:, 0] + 1e-12)
    if bound == "map":
        values = firefly_row_terms(target, bounds, target.mean)
        np.testing.assert_allclose(values[:, 1], values[:, 0], atol=1e-10)


@numba.njit
def reference_loglik(theta, data, i):
    """The binomial model written out independently: ``data[i] = [x_1, x_2, successes,
    trials]``, theta ``[w_1, w_2, b]``."""
    eta = theta[0] * data[i, 0] + theta[1] * data[i, 1] + theta[2]
    log_p = -math.log1p(math.exp(-eta)) if eta > 0 else eta - math.log1p(math.exp(eta))
    log_q = log_p - eta
    return data[i, 2] * log_p + (data[i, 3] - data[i, 2]) * log_q


@numba.njit
def reference_log_prior(theta):
    """``w ~ N(0, 1)``, ``b ~ N(0, 10^2)``: the estimator's prior with ``autoscale=False``."""
    return -0.5 * (theta[0] ** 2 + theta[1] ** 2) - 0.5 * (theta[2] / 10.0) ** 2


def independent_data():
    """The data of the independently written model's long reference."""
    X, counts = successes_of_trials(200, seed=5, max_trials=10)
    return X, counts


def independent_chain(n_draws):
    """The data and every tenth of ``n_draws`` steps of a random-walk Metropolis chain of
    the independently written model (``benchmarks/paper/family_references.py`` stores
    its summary)."""
    X, counts = independent_data()
    start = np.array([0.5, -0.3, 0.2])
    return X, counts, long_metropolis_chain(reference_loglik, reference_log_prior,
                                            np.column_stack([X, counts]).astype(float),
                                            start, step_size=0.08, n_draws=n_draws)


@pytest.fixture(scope="module")
def long_exact_chain_of_independent_model():
    """The data (200 rows of 1 to 9 trials) and the stored summary of a long random-walk
    Metropolis chain of the independently written model."""
    X, counts = independent_data()
    return X, counts, stored_reference("binomial", X, counts)


@pytest.mark.slow
@pytest.mark.parametrize("acceptance", ["auto", "minibatch", "firefly"])
def test_fits_agree_with_a_long_exact_chain_of_an_independent_model(
        long_exact_chain_of_independent_model, acceptance):
    """Means within Monte Carlo error of both sides, sds within the error of an sd
    estimate (````): the default (exact) test, the
    minibatch test on weighted fractional rows, and Firefly's bounds on them."""
    X, counts, reference = long_exact_chain_of_independent_model
    reg = BinomialRegression(acceptance=acceptance, autoscale=False, n_draws=4000,
                             n_chains=2, random_state=2).fit(X, counts)
    assert_same_distribution(reg._theta_draws(), reference, label=acceptance)


@pytest.mark.slow
def test_default_fit_of_tall_data_centres_on_the_maximum_likelihood_fit():
    """On 200,000 rows (the minibatch test with control variates) the posterior mean of the
    weights is statsmodels' ``GLM`` Binomial fit (successes and failures as ``endog``)
    within Monte Carlo error (the prior's pull and the mean's distance from the mode are
    O(1/N), far below it), the posterior sd is its standard error within the error of an
    sd estimate, and ``score`` is its deviance explained."""
    sm = pytest.importorskip("statsmodels.api", reason="statsmodels is a test dependency")
    X, counts = successes_of_trials(200_000, seed=6, weights=(0.5, -0.3, 0.1))
    reg = BinomialRegression(random_state=0).fit(X, counts)
    assert reg.acceptance_.name == "minibatch" and reg.control_variates_
    endog = np.column_stack([counts[:, 0], counts[:, 1] - counts[:, 0]])
    glm = sm.GLM(endog, sm.add_constant(X), family=sm.families.Binomial()).fit()
    coef = reg.posterior_.get("coef", flat=True)
    ess = min_ess(reg)
    z = (coef.mean(axis=0) - glm.params[1:]) / (coef.std(axis=0) / np.sqrt(ess))
    assert np.all(np.abs(z) < Z_LIMIT), z
    ratio = coef.std(axis=0) / glm.bse[1:]
    assert np.all(np.abs(ratio - 1) < Z_LIMIT * np.sqrt(0.5 / ess)), ratio
    assert reg.score(X, counts) == pytest.approx(1 - glm.deviance / glm.null_deviance,
                                                 abs=1e-4)


def test_successes_and_trials_are_proportions_weighted_by_their_trials():
    """``y`` as ``(successes, trials)`` and as proportions with ``sample_weight=trials`` give
    the same draws; with both columns and ``sample_weight``, the weights multiply the
    trials; a row of 0 trials weighs nothing."""
    X, counts = successes_of_trials(300, seed=7)
    counts[:5, 1] = counts[:5, 0] = 0
    as_counts = BinomialRegression(random_state=0, **FAST).fit(X, counts)
    trials = counts[:, 1]
    proportions = np.divide(counts[:, 0], trials, out=np.zeros(300), where=trials > 0)
    as_proportions = BinomialRegression(random_state=0, **FAST).fit(
        X, proportions, sample_weight=trials)
    np.testing.assert_array_equal(as_counts._theta_draws(), as_proportions._theta_draws())
    doubled = BinomialRegression(random_state=0, **FAST).fit(X, counts, sample_weight=2.0
                                                             * np.ones(300))
    as_weighted = BinomialRegression(random_state=0, **FAST).fit(
        X, proportions, sample_weight=2.0 * trials)
    np.testing.assert_array_equal(doubled._theta_draws(), as_weighted._theta_draws())
    assert as_counts.score(X, counts) == pytest.approx(
        as_counts.score(X, proportions, sample_weight=trials))


def test_predictions_are_posterior_predictive_means_of_one_trial():
    X, counts = successes_of_trials(500, seed=8)
    reg = BinomialRegression(random_state=0, predict_tol=None, **FAST).fit(X, counts)
    coef = reg.posterior_.get("coef", flat=True)
    intercept = reg.posterior_.get("intercept", flat=True)
    p = expit(X[:6] @ coef.T + intercept)
    mean, std = reg.predict(X[:6], return_std=True)
    np.testing.assert_allclose(mean, p.mean(axis=1), rtol=1e-12)
    np.testing.assert_allclose(std, np.sqrt((p * (1 - p)).mean(axis=1) + p.var(axis=1)),
                               rtol=1e-12)
    quantiles = reg.predict_quantiles(X[:6], (0.05, 0.5, 0.95))
    np.testing.assert_array_equal(quantiles[:, 1], (p.mean(axis=1) > 0.5).astype(float))
    np.testing.assert_array_equal(quantiles[:, [0, 2]], [[0.0, 1.0]] * 6)
    # predict_tol's default: within 1e-4 of the mean over every draw
    default = BinomialRegression(random_state=0, **FAST).fit(X, counts)
    np.testing.assert_allclose(default.predict(X[:50]),
                               expit(X[:50] @ coef.T + intercept).mean(axis=1), atol=1e-4)


def test_a_pipeline_with_one_hot_encoding_in_a_grid_search():
    """Defaults in a scikit-learn workflow: a categorical column one-hot encoded beside a
    numeric one, ``y`` as two columns through ``GridSearchCV`` and ``cross_val_score``
    (scored by deviance explained, near the generating model's)."""
    from sklearn.compose import ColumnTransformer
    from sklearn.model_selection import GridSearchCV, cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    rng = np.random.default_rng(9)
    n = 3000
    group = rng.integers(0, 4, size=n)
    x = rng.normal(size=n)
    trials = rng.integers(1, 30, size=n)
    p = expit(0.6 * x + np.array([-1.0, 0.0, 0.5, 1.0])[group])
    counts = np.column_stack([rng.binomial(trials, p), trials])
    X = np.column_stack([x, group]).astype(object)
    encode = ColumnTransformer([("num", StandardScaler(), [0]),
                                ("cat", OneHotEncoder(), [1])])
    pipeline = make_pipeline(encode, BinomialRegression(random_state=0, n_chains=2))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # the defaults converge
        scores = cross_val_score(pipeline, X, counts, cv=3)
        search = GridSearchCV(pipeline, {"binomialregression__prior_scale": [0.1, 1.0]},
                              cv=3).fit(X, counts)
    assert np.all(scores > 0.2)
    assert search.best_score_ == pytest.approx(scores.mean(), abs=0.02)


def test_bad_trials_and_proportions_are_refused_by_name():
    X, counts = successes_of_trials(100)
    bad = counts.copy()
    bad[7] = [5, 3]
    with pytest.raises(ValueError, match="0 <= successes <= trials; row 7 has 5 "
                                         "successes in 3 trials"):
        BinomialRegression(**FAST).fit(X, bad)
    bad[7] = [-1, 3]
    with pytest.raises(ValueError, match="row 7 has -1 successes"):
        BinomialRegression(**FAST).fit(X, bad)
    with pytest.raises(ValueError, match="2 columns, not 3"):
        BinomialRegression(**FAST).fit(X, np.column_stack([counts, counts[:, 0]]))
    with pytest.raises(ValueError, match=r"proportions y in \[0, 1\].*spans \[0\.5, 3\.0\]"):
        BinomialRegression(**FAST).fit(X, np.where(np.arange(100) == 4, 3.0, 0.5))
    bad = counts.astype(float)
    bad[9, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        BinomialRegression(**FAST).fit(X, bad)
    with pytest.raises(ValueError, match=r"Every row of y has 0 trials \(100 rows\)"):
        BinomialRegression(**FAST).fit(X, np.zeros((100, 2)))


def test_pointwise_log_likelihood_is_each_row_s_binomial_mass():
    """With ``(successes, trials)`` each row's value is SciPy's binomial log-mass under each
    draw (PSIS-LOO's input); with proportions, the per-trial log-likelihood."""
    X, counts = successes_of_trials(200, seed=10)
    reg = BinomialRegression(random_state=0, **FAST).fit(X, counts)
    coef, intercept = reg.posterior_["coef"], reg.posterior_["intercept"]
    p = expit(X @ coef[1, 7] + intercept[1, 7])
    successes, trials = counts.T
    np.testing.assert_allclose(reg.pointwise_log_likelihood(X, counts)[1, 7],
                               stats.binom.logpmf(successes, trials, p), rtol=1e-10)
    y = successes / trials
    np.testing.assert_allclose(reg.pointwise_log_likelihood(X, y)[1, 7],
                               y * np.log(p) + (1 - y) * np.log1p(-p), rtol=1e-10)
