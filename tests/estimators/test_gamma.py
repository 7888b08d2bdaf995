"""GammaRegression: the link and the NumPy side against SciPy's ``gamma`` and finite
differences, agreement with a long exact chain of an independently written model and with
statsmodels' maximum-likelihood fit, predictions, and its refusals (the simulation-based
calibration of its default fit is in ``tests/sampling/test_default_calibration.py``)."""
import math
import warnings

import numba
import numpy as np
import pytest
from scipy import stats
from sklearn.exceptions import ConvergenceWarning

from skbayes_mh import GammaRegression
from skbayes_mh.models import GammaModel
from skbayes_mh.models.gamma import gamma_link

from _models import FAST, long_metropolis_chain, min_ess, stored_reference
from _stats import Z_LIMIT, assert_same_distribution


def positive_outcomes(n, seed=0, weights=(0.3, -0.2), intercept=1.0, dispersion=0.25):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, len(weights)))
    mu = np.exp(X @ np.array(weights) + intercept)
    return X, rng.gamma(1.0 / dispersion, dispersion * mu)


@pytest.mark.parametrize("eta", [-3.0, 0.2, 2.0, 8.0])
@pytest.mark.parametrize("log_dispersion", [-6.0, -1.0, 0.3, 2.0])
def test_link_matches_scipy_and_finite_differences(eta, log_dispersion):
    """Shapes from 0.14 to 400 (where the Stirling series take over), outcomes from far
    below to far above the mean and at it (where ``1 + x - e^x`` is its series)."""
    k = math.exp(-log_dispersion)
    h = 1e-5
    for y in (1e-3, 0.5, math.exp(eta), 7.0, 300.0):
        u = np.array([eta, log_dispersion])
        d1, d2 = np.zeros(2), np.zeros((2, 2))
        value = gamma_link(u, y, np.zeros(0), 2, d1, d2)
        # The link leaves out -log y, a constant in the parameters.
        expected = stats.gamma.logpdf(y, k, scale=math.exp(eta) / k) + math.log(y)
        assert value == pytest.approx(expected, rel=1e-10, abs=1e-10)
        for a in range(2):
            step = np.zeros(2)
            step[a] = h
            up, down, scratch = np.zeros(2), np.zeros(2), np.zeros((2, 2))
            f_up = gamma_link(u + step, y, np.zeros(0), 1, up, scratch)
            f_down = gamma_link(u - step, y, np.zeros(0), 1, down, scratch)
            assert d1[a] == pytest.approx((f_up - f_down) / (2 * h), rel=1e-6, abs=1e-6)
            np.testing.assert_allclose(d2[a], (up - down) / (2 * h), rtol=1e-5,
                                       atol=1e-5 * max(1.0, np.abs(d2).max()))


def test_numpy_side_matches_scipy():
    model = GammaModel()
    rng = np.random.default_rng(0)
    eta = rng.normal(1.0, 1.0, size=(4, 30, 1))
    dispersion = np.array([0.1, 0.5, 1.0, 3.0])
    variables = {"dispersion": dispersion}
    y = rng.gamma(2.0, 1.0, size=30)
    shape, scale = 1.0 / dispersion[:, None], dispersion[:, None] * np.exp(eta[..., 0])
    np.testing.assert_allclose(model.log_likelihood(eta, variables, y),
                               stats.gamma.logpdf(y[None, :], shape, scale=scale), rtol=1e-10)
    quantiles = np.array([0.05, 0.5, 0.95])
    found = model.mixture_quantiles(eta, variables, quantiles)
    for j, q in enumerate(quantiles):  # the mixture's CDF at each quantile found is q
        cdf = stats.gamma.cdf(found[None, :, j], shape, scale=scale).mean(axis=0)
        np.testing.assert_allclose(cdf, q, atol=1e-6)
    # Simulation: one draw, many rows with the same mean; mean and variance within 4 sds.
    flat = np.full((1, 200_000, 1), np.log(3.0))
    draws = model.simulate(flat, {"dispersion": np.array([0.5])}, rng)[0]
    mean, variance = 3.0, 0.5 * 9.0
    assert abs(draws.mean() - mean) < 4 * math.sqrt(variance / draws.size)
    assert abs(draws.var() / variance - 1) < 0.03


@numba.njit
def reference_loglik(theta, data, i):
    """The same model written out independently: ``data[i] = [x_1, x_2, y]``, theta ``[w_1,
    w_2, b, log phi]``, shape ``1 / phi`` and rate ``1 / (phi mu)``."""
    mu = math.exp(theta[0] * data[i, 0] + theta[1] * data[i, 1] + theta[2])
    shape = math.exp(-theta[3])
    rate = shape / mu
    y = data[i, 2]
    return shape * math.log(rate) - math.lgamma(shape) + (shape - 1.0) * math.log(y) - rate * y


@numba.njit
def reference_log_prior(theta):
    """``w ~ N(0, 1)``, ``b ~ N(0, 10^2)``, ``phi ~ Exponential(1)`` on ``log phi``
    (Jacobian included): the estimator's prior with ``autoscale=False``."""
    return (-0.5 * (theta[0] ** 2 + theta[1] ** 2) - 0.5 * (theta[2] / 10.0) ** 2
            + theta[3] - math.exp(theta[3]))


def independent_data():
    """The data of the independently written model's long reference."""
    X, y = positive_outcomes(300, seed=1, dispersion=0.5)
    return X, y


def independent_chain(n_draws):
    """The data and every tenth of ``n_draws`` steps of a random-walk Metropolis chain of
    the independently written model (``benchmarks/paper/family_references.py`` stores
    its summary)."""
    X, y = independent_data()
    start = np.array([0.3, -0.2, 1.0, math.log(0.5)])
    return X, y, long_metropolis_chain(reference_loglik, reference_log_prior,
                                       np.column_stack([X, y]), start, step_size=0.06,
                                       n_draws=n_draws)


@pytest.fixture(scope="module")
def long_exact_chain_of_independent_model():
    """The data and the stored summary of a long random-walk Metropolis chain of the
    independently written model."""
    X, y = independent_data()
    return X, y, stored_reference("gamma", X, y)


@pytest.mark.slow
def test_default_fit_agrees_with_a_long_exact_chain_of_an_independent_model(
        long_exact_chain_of_independent_model):
    """Means within Monte Carlo error of both sides, sds within the error of an sd
    estimate (````)."""
    X, y, reference = long_exact_chain_of_independent_model
    # The reference's fixed prior (the default learns the weights' scale from the data)
    reg = GammaRegression(prior_scale=1.0, autoscale=False, n_draws=4000, n_chains=2,
                          random_state=2).fit(X, y)
    assert_same_distribution(reg._theta_draws(), reference)


@pytest.mark.slow
def test_default_fit_of_tall_data_centres_on_the_maximum_likelihood_fit():
    """On 200,000 rows (the minibatch test with control variates) the posterior mean of the
    weights is statsmodels' ``GLM`` Gamma fit with the log link within Monte Carlo error
    (the prior's pull and the mean's distance from the mode are O(1/N), far below it), and
    the posterior sd is the GLM's standard error (which uses the Pearson estimate of the
    dispersion) within the error of an sd estimate and 2% for the two dispersion
    estimates' difference."""
    sm = pytest.importorskip("statsmodels.api", reason="statsmodels is a test dependency")
    X, y = positive_outcomes(200_000, seed=3, weights=(0.3, -0.2, 0.1))
    reg = GammaRegression(random_state=0).fit(X, y)
    assert reg.acceptance_.name == "minibatch" and reg.control_variates_
    glm = sm.GLM(y, sm.add_constant(X), family=sm.families.Gamma(sm.families.links.Log())).fit()
    coef = reg.posterior_.get("coef", flat=True)
    ess = min_ess(reg)
    z = (coef.mean(axis=0) - glm.params[1:]) / (coef.std(axis=0) / np.sqrt(ess))
    assert np.all(np.abs(z) < Z_LIMIT), z
    ratio = coef.std(axis=0) / glm.bse[1:]
    assert np.all(np.abs(ratio - 1) < Z_LIMIT * np.sqrt(0.5 / ess) + 0.02), ratio
    assert reg.dispersion_ == pytest.approx(glm.scale, rel=0.03)
    assert reg.score(X, y) == pytest.approx(
        1 - glm.deviance / sm.GLM(y, np.ones((len(y), 1)), family=sm.families.Gamma(
            sm.families.links.Log())).fit().deviance, abs=1e-3)


def test_predictions_are_posterior_predictive_means():
    X, y = positive_outcomes(500, seed=4)
    reg = GammaRegression(random_state=0, predict_tol=None, **FAST).fit(X, y)
    coef = reg.posterior_.get("coef", flat=True)
    intercept = reg.posterior_.get("intercept", flat=True)
    dispersion = reg.posterior_.get("dispersion", flat=True)
    mu = np.exp(X[:6] @ coef.T + intercept)
    mean, std = reg.predict(X[:6], return_std=True)
    np.testing.assert_allclose(mean, mu.mean(axis=1), rtol=1e-12)
    noise = (dispersion * mu**2).mean(axis=1)
    np.testing.assert_allclose(std, np.sqrt(noise + mu.var(axis=1)), rtol=1e-12)
    assert reg.dispersion_ == pytest.approx(dispersion.mean())
    interval = reg.predict_quantiles(X[:6], (0.05, 0.95))
    for row in range(6):  # the mixture over draws puts 5% below and 5% above
        cdf = stats.gamma.cdf(interval[row], 1.0 / dispersion[:, None],
                              scale=(dispersion * mu[row])[:, None]).mean(axis=0)
        np.testing.assert_allclose(cdf, [0.05, 0.95], atol=1e-6)


def test_firefly_and_outcomes_that_are_not_positive_are_refused():
    X, y = positive_outcomes(100)
    with pytest.raises(ValueError, match="no global quadratic lower bound"):
        GammaRegression(acceptance="firefly", **FAST).fit(X, y)
    y[7] = 0.0
    with pytest.raises(ValueError, match="positive outcomes y; the smallest is 0.0"):
        GammaRegression(**FAST).fit(X, y)
    y[7] = -1.0
    with pytest.raises(ValueError, match="positive outcomes"):
        GammaRegression(**FAST).fit(X, y)


def test_no_more_rows_than_coefficients_is_refused_and_a_few_more_converge():
    """With as many coefficients as rows the weights fit every ``log y`` exactly and the
    dispersion's posterior is a funnel toward 0 with no mode (a default fit of 100 rows x
    400 features had a chain that never moved, R-hat 4e15): ``fit`` refuses it, naming the
    counts. Five residual degrees of freedom bound the funnel, and the default fit
    converges."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(105, 100))
    y = rng.gamma(4.0, np.exp(X[:, :5] @ np.full(5, 0.3) + 0.5) / 4.0)
    for n_rows, settings in [(100, {}), (101, {}), (100, dict(fit_intercept=False))]:
        n_coefficients = 100 + settings.get("fit_intercept", True)
        with pytest.raises(ValueError, match=f"more samples than coefficients, got n_samples "
                                             f"= {n_rows} for {n_coefficients} coefficients"):
            GammaRegression(**FAST, **settings).fit(X[:n_rows], y[:n_rows])
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        fitted = GammaRegression(random_state=0).fit(X, y)
    assert max(float(np.max(r_hat)) for r_hat in fitted.diagnostics_["r_hat"].values()) <= 1.01
    assert np.all(np.isfinite(fitted.predict(X)))
