"""The probit link of MinibatchMHLogisticRegression: log Phi and the inverse Mills ratio
against SciPy in both tails, derivatives against finite differences, its Firefly bound
below the likelihood and tight at its tangent, scikit-learn citizenship, and the posterior
of the default sampler and of Firefly against a long exact chain of an independently
written model."""
import math

import numba
import numpy as np
import pytest
from scipy import special

from skbayes_mh import MinibatchMHLogisticRegression
from skbayes_mh.models.probit import log_ndtr_and_ratio, probit_bound, probit_link

from _models import FAST, long_metropolis_chain, stored_reference
from _stats import assert_same_distribution


def probit_data(n, seed=0, weights=(0.8, -0.5), intercept=0.3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, len(weights)))
    return X, (X @ np.array(weights) + intercept + rng.normal(size=n) > 0).astype(int)


def test_log_cdf_and_inverse_mills_ratio_match_scipy_in_both_tails():
    s = np.concatenate([np.linspace(-200, -25, 300), np.linspace(-25, 40, 1301)])
    values = np.array([log_ndtr_and_ratio(v) for v in s])
    np.testing.assert_allclose(values[:, 0], special.log_ndtr(s), rtol=1e-13, atol=1e-300)
    # The reference ratio is exp of a difference of terms up to s^2 / 2 = 2e4, so it carries
    # a relative error of about 2e4 x 2.2e-16 = 4.4e-12 itself: compared to 5e-11.
    ratio = np.exp(-0.5 * s * s - 0.5 * np.log(2 * np.pi) - special.log_ndtr(s))
    np.testing.assert_allclose(values[:, 1], ratio, rtol=5e-11)


@pytest.mark.parametrize("eta", [-40.0, -6.0, -0.7, 0.0, 1.3, 9.0])
def test_link_derivatives_match_finite_differences(eta):
    h = 1e-6
    for y in (0.0, 1.0):
        d1, d2 = np.zeros(1), np.zeros((1, 1))
        value = probit_link(np.array([eta]), y, np.zeros(0), 2, d1, d2)
        assert value == pytest.approx(special.log_ndtr((2 * y - 1) * eta), rel=1e-13)
        up, down, scratch = np.zeros(1), np.zeros(1), np.zeros((1, 1))
        f_up = probit_link(np.array([eta + h]), y, np.zeros(0), 1, up, scratch)
        f_down = probit_link(np.array([eta - h]), y, np.zeros(0), 1, down, scratch)
        assert d1[0] == pytest.approx((f_up - f_down) / (2 * h), rel=1e-6, abs=1e-7)
        assert d2[0, 0] == pytest.approx((up[0] - down[0]) / (2 * h), rel=1e-5, abs=1e-6)


@pytest.mark.parametrize("tangent", [-20.0, -2.0, 0.0, 1.5, 6.0])
def test_firefly_bound_is_below_and_tight_at_its_tangent(tangent):
    eta = np.linspace(-30, 30, 6001)
    for y in (0.0, 1.0):
        linear, curvature = np.zeros(1), np.zeros((1, 1))
        c, c0, s = probit_bound(np.array([tangent]), y, np.zeros(0), np.array([1.0, 0.0]),
                                linear, curvature)
        bound = c + linear[0] * eta - 0.5 * curvature[0, 0] * eta**2 + c0
        exact = special.log_ndtr((2 * y - 1) * eta)
        assert np.all(bound <= exact + 1e-12 * np.maximum(1.0, np.abs(exact)))
        at = c + linear[0] * tangent - 0.5 * curvature[0, 0] * tangent**2 + c0
        assert at == pytest.approx(special.log_ndtr((2 * y - 1) * tangent), rel=1e-12)
        assert s == 0.0


@numba.njit
def reference_loglik(theta, data, i):
    """Probit written out independently: ``data[i] = [x_1, x_2, y]``."""
    eta = theta[0] * data[i, 0] + theta[1] * data[i, 1] + theta[2]
    s = eta if data[i, 2] == 1.0 else -eta
    return math.log(0.5 * math.erfc(-s / math.sqrt(2.0)))


@numba.njit
def reference_log_prior(theta):
    """``w ~ N(0, 1)``, ``b ~ N(0, 10^2)``: the estimator's prior with ``autoscale=False``."""
    return -0.5 * (theta[0] ** 2 + theta[1] ** 2) - 0.5 * (theta[2] / 10.0) ** 2


def independent_data():
    """The data of the independently written model's long reference."""
    X, y = probit_data(400, seed=1)
    return X, y


def independent_chain(n_draws):
    """The data and every tenth of ``n_draws`` steps of a random-walk Metropolis chain of
    the independently written model (``benchmarks/paper/family_references.py`` stores
    its summary)."""
    X, y = independent_data()
    return X, y, long_metropolis_chain(reference_loglik, reference_log_prior,
                                       np.column_stack([X, y.astype(float)]),
                                       np.array([0.8, -0.5, 0.3]), step_size=0.12,
                                       n_draws=n_draws)


@pytest.fixture(scope="module")
def long_exact_chain_of_independent_model():
    """The data and the stored summary of a long random-walk Metropolis chain of the
    independently written model."""
    X, y = independent_data()
    return X, y, stored_reference("probit", X, y)


@pytest.mark.slow
@pytest.mark.parametrize("acceptance, n_draws", [("auto", 4000), ("firefly", 10_000)])
def test_posterior_agrees_with_a_long_exact_chain_of_an_independent_model(
        long_exact_chain_of_independent_model, acceptance, n_draws):
    """Means and sds within both sides' Monte Carlo error, with enough draws to see a 0.1
    sd shift or a 10% sd error (Firefly's chains, which switch rows on and off, mix about
    half as fast)."""
    X, y, reference = long_exact_chain_of_independent_model
    clf = MinibatchMHLogisticRegression(link="probit", acceptance=acceptance, autoscale=False,
                                        n_draws=n_draws, n_chains=2, random_state=2).fit(X, y)
    assert_same_distribution(clf._theta_draws(), reference, label=acceptance)


def test_probabilities_are_posterior_means_of_the_normal_cdf():
    X, y = probit_data(300, seed=4)
    clf = MinibatchMHLogisticRegression(link="probit", random_state=0, **FAST).fit(X, y)
    coef = clf.posterior_.get("coef", flat=True)
    intercept = clf.posterior_.get("intercept", flat=True)
    expected = special.ndtr(X[:7] @ coef.T + intercept).mean(axis=1)
    np.testing.assert_allclose(clf.predict_proba(X[:7])[:, 1], expected, rtol=1e-12)
    logit_fit = MinibatchMHLogisticRegression(random_state=0, **FAST).fit(X, y)
    # Probit coefficients are about 1/1.6-1.8 of logistic ones on the same data.
    assert 1.3 < np.mean(logit_fit.coef_ / clf.coef_) < 2.1
