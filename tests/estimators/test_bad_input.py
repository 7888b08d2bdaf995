"""Bad input and extreme data: a clear error naming the problem, or a finite posterior that
converged or warned; never a silent wrong answer, a numba traceback or a hang."""
import warnings

import numba
import numpy as np
import pytest
from sklearn.datasets import make_classification

from skbayes_mh import (FireflySoftmaxClassifier, MinibatchMHLogisticRegression,
                        RobustTRegression, acceptance_probability, sample)
from skbayes_mh.linear_model import ESTIMATORS

from _models import gaussian_mean_loglik, quiet_fit, target_kind

#: Chains long enough for r_hat to judge them (the tests want a converged fit or a warning),
#: seeded.
LONG_ENOUGH_FOR_R_HAT = dict(n_draws=200, n_warmup=200, n_chains=2, random_state=0)


def fit_recording(estimator, X, y):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        estimator.fit(X, y)
    return [str(w.message) for w in caught]


def judged_rhat(estimator):
    """The largest R-hat the convergence check judged: a span fit's sampled coordinates
    (``diagnostics_.sampled``; the other weights are exact prior draws), every parameter's
    otherwise."""
    if "sampled" in estimator.diagnostics_:
        return float(np.nanmax(estimator.diagnostics_.sampled.r_hat))
    return max(float(np.nanmax(v)) for v in estimator.diagnostics_.r_hat.values())


def outlier_data(value, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(400, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + rng.normal(size=400)
    y[:20] = value  # 5% gross outliers
    return X, y


@pytest.mark.parametrize("value", [1e8, 1e4])
@pytest.mark.parametrize("acceptance", ["auto", "firefly"])
def test_robust_regression_resists_five_percent_gross_outliers(value, acceptance):
    X, y = outlier_data(value)
    reg = RobustTRegression(acceptance=acceptance, random_state=0).fit(X, y)
    # Truth [1, -2, 0.5] with unit noise on 380 clean rows: posterior sd about 0.06.
    np.testing.assert_allclose(reg.coef_, [1.0, -2.0, 0.5], atol=0.3)
    assert 0.7 < reg.scale_ < 1.5
    assert max(float(np.nanmax(v)) for v in reg.diagnostics_.r_hat.values()) < 1.05


def test_softmax_with_an_extreme_value_is_finite_and_converged_or_warned():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 4))
    y = rng.integers(0, 3, 400)
    X[5, 0] = 1e20
    clf = FireflySoftmaxClassifier(**LONG_ENOUGH_FOR_R_HAT)
    messages = fit_recording(clf, X, y)
    assert np.all(np.isfinite(clf.predict_proba(X)))
    assert judged_rhat(clf) <= 1.01 or any("may not have converged" in m for m in messages)


def test_huge_prior_on_collinear_features_is_finite_and_converged_or_warned():
    X, y = make_classification(random_state=0)
    clf = MinibatchMHLogisticRegression(prior_scale=1e8, **LONG_ENOUGH_FOR_R_HAT)
    messages = fit_recording(clf, X, y)
    assert np.all(np.isfinite(clf.coef_)) and np.all(np.isfinite(clf.predict_proba(X)))
    assert judged_rhat(clf) <= 1.01 or any("may not have converged" in m for m in messages)


def test_values_beyond_1e100_are_named_and_refused():
    X, y = make_classification(random_state=0)
    X[:, 2] *= 1e300
    with pytest.raises(ValueError, match="Feature 2 of X .* Rescale it"):
        MinibatchMHLogisticRegression(**LONG_ENOUGH_FOR_R_HAT).fit(X, y)
    Xr, yr = outlier_data(0.0)
    with pytest.raises(ValueError, match="y has a .* Rescale y"):
        RobustTRegression(**LONG_ENOUGH_FOR_R_HAT).fit(Xr, yr * 1e300)


@pytest.mark.parametrize("n_warmup", [1, 5, 19, 20, 21])
def test_short_warmups_give_finite_step_sizes(n_warmup):
    X, y = make_classification(random_state=0)
    clf = MinibatchMHLogisticRegression(n_warmup=n_warmup, n_draws=50, n_chains=2,
                                        random_state=0)
    fit_recording(clf, X, y)
    assert np.all(np.isfinite(clf.step_size_)) and np.all(clf.step_size_ > 0)
    assert np.all(np.isfinite(clf.coef_))


@pytest.mark.parametrize("name", ["n_draws", "n_warmup"])
def test_draw_counts_beyond_memory_are_refused_at_once(name):
    X, y = make_classification(random_state=0)
    with pytest.raises(ValueError, match=f"{name}=1,000,000,000,000 .* GiB"):
        MinibatchMHLogisticRegression(**{**LONG_ENOUGH_FOR_R_HAT, name: 10**12}).fit(X, y)


def test_regressor_refuses_non_numeric_y_and_boolean_seeds():
    X, y = outlier_data(0.0)
    with pytest.raises(ValueError, match="y must be numeric for a regressor"):
        RobustTRegression(**LONG_ENOUGH_FOR_R_HAT).fit(X, np.array(["a"] * 400))
    with pytest.raises(TypeError, match="random_state must be an int"):
        MinibatchMHLogisticRegression(**{**LONG_ENOUGH_FOR_R_HAT, "random_state": True}).fit(
            *make_classification(random_state=0))


def test_regressor_refuses_y_that_x_fits_exactly():
    """N > d but y exactly linear in X: the scale's posterior piles up at 0 (improper)."""
    X, _ = outlier_data(0.0)
    with pytest.raises(ValueError, match="y is a linear function of X.*improper"):
        RobustTRegression(**LONG_ENOUGH_FOR_R_HAT).fit(X, X @ [1.0, -2.0, 0.5] + 3.0)
    # A fixed scale makes the posterior proper again.
    reg = RobustTRegression(scale=1.0, **LONG_ENOUGH_FOR_R_HAT).fit(X, X @ [1.0, -2.0, 0.5] + 3.0)
    np.testing.assert_allclose(reg.coef_, [1.0, -2.0, 0.5], atol=0.3)


@numba.njit(cache=True)
def reads_two_parameters(theta, data, i):
    return -0.5 * (data[i, 0] - theta[0]) ** 2 - 0.5 * theta[1] ** 2


@numba.njit(cache=True)
def returns_float32(theta, data, i):
    return np.float32(-0.5 * (data[i, 0] - theta[0]) ** 2)


@numba.njit(cache=True)
def overflowing_loglik(theta, data, i):
    return 1e306 * (1.0 + 0.0 * theta[0])


def test_sample_refuses_what_would_read_out_of_bounds_or_mistype():
    x = np.random.default_rng(0).normal(size=(500, 1))
    with pytest.raises(ValueError, match="indexes beyond its arguments.*theta0"):
        sample(reads_two_parameters, x, [0.0], step_size=0.1, acceptance="metropolis",
               n_draws=10)
    with pytest.raises(TypeError, match="must return a float64.*float32"):
        sample(returns_float32, x, [0.0], step_size=0.1, n_draws=10)
    with pytest.raises(TypeError, match="theta0 must be an array of real numbers; got None"):
        sample(gaussian_mean_loglik, x, None, step_size=0.1, n_draws=10)
    with pytest.raises(ValueError, match="sum of loglik over the rows is \\+inf"):
        sample(overflowing_loglik, x, [0.0], step_size=0.1, n_draws=10)


def test_acceptance_probability_refuses_nan_log_psi():
    x = np.random.default_rng(0).normal(size=(100, 1))
    with pytest.raises(ValueError, match="log_psi must be a real number"):
        acceptance_probability(gaussian_mean_loglik, x, [0.0], [0.1],
                               acceptance="metropolis", log_psi=np.nan)
    with pytest.raises(TypeError, match="log_psi must be a real number or -inf; got '0'"):
        acceptance_probability(gaussian_mean_loglik, x, [0.0], [0.1],
                               acceptance="metropolis", log_psi="0")
    probability, _ = acceptance_probability(gaussian_mean_loglik, x, [0.0], [0.1],
                                             acceptance="metropolis", log_psi=-np.inf,
                                             n_trials=10)
    assert probability == 0.0


def test_predictive_mean_risk_refuses_a_nan_reference():
    X, y = make_classification(random_state=0)
    clf = MinibatchMHLogisticRegression(n_draws=20, n_warmup=20, n_chains=1, random_state=0)
    fit_recording(clf, X, y)
    reference = clf.predict_proba(X)[:, 1]
    reference[3] = np.nan
    with pytest.raises(ValueError, match="row 3 is nan"):
        clf.predictive_mean_risk(X, reference)


TINY_TEMPERATURE_CASES = [(cls, target_kind(cls)) for cls in ESTIMATORS.values()]


@pytest.mark.slow
@pytest.mark.parametrize("estimator_class, kind", TINY_TEMPERATURE_CASES)
def test_temperatures_down_to_1e_100_are_finite_and_converged_or_warned(estimator_class,
                                                                        kind):
    """The log-likelihood is multiplied by 1/temperature: at 1e-100 the posterior is a
    point at the maximum likelihood, every proposal overshoots, and the chains may not
    move (a warning); below, the sums overflow and fit refuses the temperature."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    if kind == "classification":
        y = (X @ [1.0, -1.0, 0.5] + rng.normal(size=300) > 0).astype(int)
    elif kind == "regression":
        y = X @ [1.0, -2.0, 0.5] + rng.standard_t(4, size=300)
    elif kind == "positive":
        y = rng.gamma(4.0, np.exp(0.3 * X[:, 0]) / 4.0)
    elif kind == "proportions":
        y = rng.binomial(10, 1.0 / (1.0 + np.exp(-0.3 * X[:, 0]))) / 10.0
    else:
        y = rng.poisson(np.exp(0.3 * X[:, 0]))
    estimator = estimator_class(temperature=1e-100, **LONG_ENOUGH_FOR_R_HAT)
    messages = fit_recording(estimator, X, y)
    for name, draws in estimator.posterior_.draws.items():
        assert np.all(np.isfinite(draws)), name
    rhat = max(float(np.nanmax(v)) for v in estimator.diagnostics_.r_hat.values())
    assert rhat <= 1.01 or any("may not have converged" in m for m in messages)
    with pytest.raises(ValueError, match="temperature"):
        estimator_class(temperature=1e-101, **LONG_ENOUGH_FOR_R_HAT).fit(X, y)


def test_sample_refuses_temperatures_below_1e_100():
    x = np.random.default_rng(0).normal(size=(100, 1))
    with pytest.raises(ValueError, match="temperature must be finite and >= 1e-100"):
        sample(gaussian_mean_loglik, x, [0.0], step_size=0.1, n_draws=10,
               temperature=1e-150)
    with pytest.raises(ValueError, match="temperature must be finite and >= 1e-100"):
        acceptance_probability(gaussian_mean_loglik, x, [0.0], [0.1], acceptance="metropolis",
                               temperature=0.0)


def test_robust_regression_refuses_y_so_often_equal_that_its_posterior_is_improper():
    """A line through m of n rows makes the Student-t posterior (nu = 4, free scale)
    improper from m = 4 (n - m) + 1 on: 33 equal values of 40 are refused, naming the
    cause; 32 fit (and so does the same y with its scale fixed)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    for n_equal, refused in ((33, True), (32, False)):
        y = np.zeros(40)
        y[n_equal:] = 3.0 * rng.normal(size=40 - n_equal)
        estimator = RobustTRegression(n_draws=100, n_warmup=100, n_chains=2, random_state=0)
        if refused:
            with pytest.raises(ValueError, match=r"33 of 40 rows of y lie exactly on one "
                                                 r"linear function of X.*improper"):
                estimator.fit(X, y)
            fixed = RobustTRegression(scale=1.0, n_draws=100, n_warmup=100, n_chains=2,
                                      random_state=0)
            assert np.all(np.isfinite(quiet_fit(fixed, X, y).coef_))
        else:
            assert np.all(np.isfinite(quiet_fit(estimator, X, y).coef_))


def test_robust_start_survives_rows_it_fits_exactly():
    """Least absolute deviations from a start that fits most rows exactly (median residual
    0) weighted those rows by 1e300 and left its normal equations singular (a LinAlgError
    from fit); found by the property tests."""
    X = np.array([[0.0, 1.0], [1.0, 1.0], [1.0, 1.0], [1.0, 1.0]])
    y = np.array([0.0, 1.0, 0.0078125, 0.00390625])
    reg = RobustTRegression(acceptance="metropolis", prior_scale=1e-3, temperature=1e-3,
                            n_draws=20, n_warmup=20, n_chains=1, random_state=0)
    assert np.all(np.isfinite(quiet_fit(reg, X, y).predict(X)))
