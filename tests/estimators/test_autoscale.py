"""Priors on the data's scale (``autoscale=True``, the default): weight ``j``'s prior scale is
``prior_scale / sd(x_j)`` (times ``sd(y)`` for regression) and the intercept's prior is on
the intercept at the features' means, so that the posterior follows the features when they
are rescaled or shifted; ``autoscale=False`` keeps the raw-scale priors."""
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_diabetes
from sklearn.linear_model import LinearRegression

import scipy.sparse as sp

from skbayes_mh import (FireflySoftmaxClassifier, MinibatchMHLogisticRegression,
                        MinibatchMHPoissonRegression, RobustTRegression)
from skbayes_mh._passes import scan_data
from skbayes_mh.diagnostics import mcse_mean, mcse_sd
from skbayes_mh.linear_model._priors import AUTOSCALE_REACH, autoscale_spread
from skbayes_mh.models import LinearData

from _models import min_ess
from _stats import Z_LIMIT


@pytest.mark.slow
@pytest.mark.parametrize("scaled", [True, False])
def test_diabetes_defaults_match_least_squares(scaled):
    """The data set as scikit-learn ships it (features scaled to sd 0.048, y in the
    hundreds) and raw (ages, blood pressures): R^2 within 0.02 of least squares."""
    X, y = load_diabetes(return_X_y=True, scaled=scaled)
    fit = RobustTRegression(random_state=0).fit(X, y)
    reference = LinearRegression().fit(X, y).score(X, y)
    assert fit.score(X, y) > reference - 0.02
    assert max(float(np.max(v)) for v in fit.diagnostics_["r_hat"].values()) <= 1.01


def test_posterior_follows_a_rescaled_and_shifted_feature():
    """x_0 -> 1000 x_0 + 500: with autoscaled priors the posterior of 1000 w_0 and of the
    other weights is the same (within Monte Carlo error); without, it is not."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((400, 3))
    y = (rng.random(400) < 1 / (1 + np.exp(-X @ [1.5, -1.0, 0.5]))).astype(int)
    stretched = X.copy()
    stretched[:, 0] = 1000 * X[:, 0] + 500
    settings = dict(acceptance="metropolis", prior_scale=0.1, random_state=0)
    base = MinibatchMHLogisticRegression(**settings).fit(X, y)
    moved = MinibatchMHLogisticRegression(**settings).fit(stretched, y)
    a = base.posterior_.get("coef", flat=True)
    b = moved.posterior_.get("coef", flat=True) * [1000, 1, 1]
    error = np.sqrt(a.var(axis=0) / min_ess(base) + b.var(axis=0) / min_ess(moved))
    assert np.all(np.abs(a.mean(axis=0) - b.mean(axis=0)) < Z_LIMIT * error)
    ess = min(min_ess(base), min_ess(moved))
    assert np.all(np.abs(b.std(axis=0) / a.std(axis=0) - 1) < Z_LIMIT / np.sqrt(ess))
    np.testing.assert_allclose(moved.predict_proba(stretched[:20]),
                               base.predict_proba(X[:20]), atol=0.03)
    # Raw-scale priors: the tight prior_scale now barely restrains 1000 w_0 on the stretched
    # feature, while it shrinks w_0 on the standard one.
    raw = dict(settings, autoscale=False)
    raw_base = MinibatchMHLogisticRegression(**raw).fit(X, y)
    raw_moved = MinibatchMHLogisticRegression(**raw).fit(stretched, y)
    assert (raw_moved.coef_[0, 0] * 1000) > raw_base.coef_[0, 0] + 0.3


def test_the_prior_built_with_and_without_autoscale():
    X = np.column_stack([np.linspace(0, 10, 50), np.full(50, 3.0)])
    data = LinearData(X, np.zeros(50), np.zeros(0), True)
    summary = {"x_mean": X.mean(axis=0), "x_std": X.std(axis=0), "x_min": X.min(axis=0),
               "x_max": X.max(axis=0)}
    estimator = RobustTRegression(prior_scale=2.0)
    prior = estimator._prior(1, data, summary, 1, 2.0, 7.0, outcome_scale=5.0)
    np.testing.assert_allclose(prior.scales, [2.0 * 5.0 / X[:, 0].std(), 2.0 * 5.0, 7.0])
    np.testing.assert_allclose(prior.means, X.mean(axis=0))  # the constant column keeps 1
    raw = RobustTRegression(prior_scale=2.0, autoscale=False)._prior(
        1, data, summary, 1, 2.0, 7.0, outcome_scale=5.0)
    np.testing.assert_allclose(raw.scales, [2.0, 2.0, 7.0])
    assert raw.means.size == 0


def test_a_rare_feature_is_standardised_within_reach():
    """A Gaussian feature keeps its sd; a binary feature that 3 rows of 3,000 light, and a
    Gaussian one with a far outlier, are divided by their largest distance from the mean
    over AUTOSCALE_REACH (else the lit rows would stand 31.6 sds out), dense or sparse."""
    rng = np.random.default_rng(1)
    X = np.column_stack([rng.standard_normal(3000), np.zeros(3000), rng.standard_normal(3000),
                         np.full(3000, 2.0)])
    X[:3, 1] = 1.0
    X[0, 2] = 60.0
    for given in (X, sp.csr_matrix(X)):
        summary = scan_data(given, np.zeros(3000))
        spread = autoscale_spread(summary)
        assert spread[0] == pytest.approx(X[:, 0].std())
        assert spread[1] == pytest.approx((1 - 0.001) / AUTOSCALE_REACH)
        assert spread[2] == pytest.approx((60.0 - X[:, 2].mean()) / AUTOSCALE_REACH)
        assert spread[3] == 1.0  # constant
        standardised = (X - summary["x_mean"]) / spread
        assert np.abs(standardised).max() <= AUTOSCALE_REACH * (1 + 1e-12)


@pytest.mark.slow
def test_a_rare_pixel_leaves_the_default_softmax_converged():
    """Pixels that one or two rows of 1,200 light (as digits' and MNIST's edges): under the
    sd's scale their weights' posteriors were walls that the chains crossed slowly; within
    reach the default fit converges and each rare weight keeps about its prior."""
    rng = np.random.default_rng(2)
    n = 1200
    y = rng.integers(0, 3, n)
    X = rng.standard_normal((n, 4)) + np.eye(3)[y] @ rng.standard_normal((3, 4))
    rare = np.zeros((n, 6))
    rare[rng.choice(n, 6, replace=False), np.arange(6)] = 16.0
    X = np.column_stack([X, rare])
    fit = FireflySoftmaxClassifier(random_state=0, n_jobs=2).fit(X, y)
    assert max(float(np.max(v)) for v in fit.diagnostics_["r_hat"].values()) <= 1.01
    assert min_ess(fit) >= 400
    # The raw weight's prior sd: AUTOSCALE_REACH / (16 (1 - 1/n)); the one lit row moves it
    # little, so the posterior sd of the centred weights is of that order, not sqrt(n) times.
    coef = fit.posterior_.get("coef", flat=True)[:, :, 4:]
    centred = coef - coef.mean(axis=1, keepdims=True)
    prior_sd = AUTOSCALE_REACH / (16.0 * (1 - 1 / n))
    assert np.all(centred.std(axis=0) < prior_sd)
    assert np.all(centred.std(axis=0) > 0.3 * prior_sd)


def test_robust_regression_on_exactly_linear_y_is_refused():
    X = np.random.default_rng(0).normal(size=(10, 4))
    with pytest.raises(ValueError, match="y is a linear function of X"):
        RobustTRegression(n_draws=50, n_warmup=50).fit(X, X[:, 0])
    fixed = RobustTRegression(scale=0.1, n_draws=50, n_warmup=50, n_chains=1,
                              random_state=0).fit(X, X[:, 0])
    assert np.isfinite(fixed.coef_).all()


def test_autoscaled_gaussian_regression_matches_its_conjugate_posterior():
    """nu -> inf and a fixed scale: Gaussian regression, whose posterior under the
    autoscaled prior (w_j ~ N(0, (s sd(y) / sd(x_j))^2), b + mean(x) . w ~ N(mean(y),
    s_b^2)) is Gaussian and known."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 2)) * [3.0, 0.2] + [10.0, -4.0]
    y = X @ [0.4, -3.0] + 1.0 + 0.8 * rng.normal(size=300)
    prior_scale, intercept_scale = 0.05, 2.0
    reg = RobustTRegression(nu=1e7, scale=0.8, prior="gaussian", prior_scale=prior_scale,
                            intercept_prior_scale=intercept_scale, acceptance="metropolis",
                            n_draws=4000, n_chains=2, random_state=0).fit(X, y)
    design = np.column_stack([X, np.ones(300)])
    weight_scales = prior_scale * y.std() / X.std(axis=0)
    centred = np.r_[X.mean(axis=0), 1.0]
    precision_prior = np.diag(np.r_[weight_scales**-2.0, 0.0])
    precision_prior += np.outer(centred, centred) / intercept_scale**2
    covariance = np.linalg.inv(design.T @ design / 0.8**2 + precision_prior)
    mean = covariance @ (design.T @ y / 0.8**2 + centred * y.mean() / intercept_scale**2)
    chains = np.concatenate([np.asarray(reg.posterior_.get("coef")).reshape(2, 4000, -1),
                             np.asarray(reg.posterior_.get("intercept")).reshape(2, 4000, 1)],
                            axis=2)
    draws = chains.reshape(-1, 3)
    sd = np.sqrt(np.diag(covariance))
    # Each moment within Z_LIMIT of its own Monte Carlo error: Hamiltonian paths of about a
    # quarter period give nearly antithetic draws, whose mean is far better known than
    # their sd (the bulk ESS, above the number of draws, would understate the sd's error).
    assert np.all(np.abs(draws.mean(axis=0) - mean) < Z_LIMIT * mcse_mean(chains))
    assert np.all(np.abs(draws.std(axis=0) - sd) < Z_LIMIT * mcse_sd(chains))
    # The prior shrinks: the posterior differs from least squares by more than its error.
    assert np.max(np.abs(mean - np.linalg.lstsq(design, y, rcond=None)[0]) / sd) > 1


def test_a_constant_or_subnormal_feature_keeps_the_raw_scale_prior():
    """A column of one value (its computed sd is rounding, 2.8e-14 here) and a column of
    subnormal values get spread 1, not a prior sd of 10^20 or 10^160 whose draws overflowed
    the predictions; an ordinary column keeps its own spread."""
    rng = np.random.default_rng(0)
    X = np.column_stack([np.full(35, -236.12644541), rng.random(35) * 1e-310,
                         rng.normal(0.0, 3.0, 35)])
    summary = scan_data(X, np.zeros(35))
    assert 0 < summary["x_std"][0] < 1e-12
    spread = autoscale_spread(summary)
    np.testing.assert_array_equal(spread[:2], [1.0, 1.0])
    reach = np.max(np.abs(X[:, 2] - X[:, 2].mean())) / AUTOSCALE_REACH
    assert spread[2] == pytest.approx(max(X[:, 2].std(), reach), rel=1e-9)
    reg = MinibatchMHPoissonRegression(acceptance="metropolis", prior_scale=1e6,
                                       temperature=1e-3, n_draws=50, n_warmup=50, n_chains=1,
                                       random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 50 draws of a flat direction: not converged
        reg.fit(X[:, :1].repeat(2, axis=1), np.zeros(35))
    assert np.all(np.isfinite(reg.predict(X[:, :1].repeat(2, axis=1))))
