"""Chains that can disagree: where a fit's chains start (over-dispersed draws of the Laplace
approximation, in turn in each mode the MAP search found within reach) and the check that
their log posterior levels agree (``_core.convergence.check_chain_levels``), with the exact
log posterior it reads (``Target.log_posterior``)."""
import warnings

import numpy as np
import pytest
from scipy import stats
from sklearn.exceptions import ConvergenceWarning

from skbayes_mh._core.convergence import (LP_CHECK_MIN_DRAWS, MODE_REACH_NATS,
                                          check_chain_levels)
from skbayes_mh._core.chains import START_DISPERSION, chain_levels, chain_starts
from skbayes_mh.models import LogisticModel
from skbayes_mh.sampling import _target

from _models import linear_target


@pytest.fixture(scope="module")
def target():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = (rng.random(300) < 1.0 / (1.0 + np.exp(-X @ [1.0, -1.0, 0.5]))).astype(float)
    return linear_target(LogisticModel(), X, y, np.array([2.0, 2.0, 2.0, 5.0]))


def test_log_posterior_is_the_tempered_likelihood_plus_the_prior(target):
    theta = np.array([0.3, -0.2, 0.1, 0.4])
    X, y = target.data.X, target.data.y
    eta = X @ theta[:3] + theta[3]
    loglik = np.sum(y * eta - np.logaddexp(0.0, eta))
    log_prior = stats.norm(0.0, [2.0, 2.0, 2.0, 5.0]).logpdf(theta).sum()
    value = target.log_posterior(theta)
    # Up to the prior's normalising constant, which does not depend on theta.
    other = np.array([-0.5, 0.6, 0.0, -1.0])
    eta_other = X @ other[:3] + other[3]
    loglik_other = np.sum(y * eta_other - np.logaddexp(0.0, eta_other))
    log_prior_other = stats.norm(0.0, [2.0, 2.0, 2.0, 5.0]).logpdf(other).sum()
    np.testing.assert_allclose(value - target.log_posterior(other),
                               loglik + log_prior - loglik_other - log_prior_other, rtol=1e-10)


def test_starts_are_over_dispersed_laplace_draws(target):
    # The whitened squared distance of a start from the MAP is START_DISPERSION^2 times a
    # chi-square with d degrees of freedom.
    seeds = np.arange(2000)
    starts = np.array(chain_starts(target, seeds))
    centred = starts - target.mean
    distance = np.einsum("si,ij,sj->s", centred, np.linalg.inv(target.covariance), centred)
    d = target.n_params
    expected, sd = START_DISPERSION**2 * d, START_DISPERSION**2 * np.sqrt(2 * d)
    assert abs(distance.mean() - expected) < 4 * sd / np.sqrt(seeds.size), distance.mean()
    np.testing.assert_array_equal(chain_starts(target, seeds[:4]), starts[:4])  # per seed


def test_chains_start_in_turn_in_each_mode_within_reach(target, monkeypatch):
    far = np.full(target.n_params, 10.0)
    near = np.full(target.n_params, -10.0)
    modes = [(5.0, target.mean), (5.0 + MODE_REACH_NATS + 1, far), (25.0, near)]
    monkeypatch.setitem(target.extra, "modes", sorted(modes, key=lambda mode: mode[0]))
    starts = np.array(chain_starts(target, np.arange(6)))
    nearest = np.argmin([[np.linalg.norm(start - centre) for centre in (target.mean, near, far)]
                         for start in starts], axis=1)
    np.testing.assert_array_equal(nearest, [0, 1, 0, 1, 0, 1])  # never the far one


def test_levels_are_the_exact_log_posterior_at_evenly_spaced_draws(target):
    rng = np.random.default_rng(1)
    draws = target.mean + 0.1 * rng.normal(size=(3, 50, target.n_params))
    levels = chain_levels(target, draws)
    assert levels.shape == (3, 20)
    np.testing.assert_allclose(target.log_posteriors(draws[0, :2]),
                               [target.log_posterior(theta) for theta in draws[0, :2]])
    np.testing.assert_allclose(levels[1, -1], target.log_posterior(draws[1, -1]))
    np.testing.assert_allclose(levels[2, 0], target.log_posterior(draws[2, 0]))
    assert chain_levels(target, draws[:, :3]).shape == (3, 3)  # at most every draw


@pytest.mark.parametrize("temperature", [1.0, 3.0])
def test_an_exact_fits_recorded_levels_are_the_exact_log_posterior(temperature):
    # The exact tests record the tempered log posterior at every draw; the levels read them
    # instead of a pass a draw, and must be what the pass gives.
    from skbayes_mh import MinibatchMHLogisticRegression
    from skbayes_mh._core import fit as fit_module

    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 3))
    y = (rng.random(400) < 1.0 / (1.0 + np.exp(-X @ [1.0, -1.0, 0.5]))).astype(int)
    seen = {}
    original = fit_module.chain_levels

    def spy(target, draws, cv=None, recorded=None):
        seen.update(target=target, draws=draws, recorded=recorded)
        return original(target, draws, cv, recorded)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fit_module, "chain_levels", spy)
        MinibatchMHLogisticRegression(acceptance="metropolis", temperature=temperature,
                                      n_draws=60, n_warmup=100, n_chains=2,
                                      random_state=0).fit(X, y)
    read = spy(seen["target"], seen["draws"], recorded=seen["recorded"])
    computed = chain_levels(seen["target"], seen["draws"])
    assert seen["recorded"] is not None and read.shape == computed.shape == (2, 20)
    np.testing.assert_allclose(read, computed, rtol=1e-12, atol=1e-9)


def test_levels_in_small_tables_are_the_same(target, monkeypatch):
    # 300 rows a theta, tables of at most 700 entries: thetas two at a time, the last alone.
    rng = np.random.default_rng(2)
    thetas = target.mean + 0.1 * rng.normal(size=(5, target.n_params))
    whole = target.log_posteriors(thetas)
    monkeypatch.setattr(_target, "ROW_TABLE_CHUNK", 700)
    np.testing.assert_array_equal(target.log_posteriors(thetas), whole)
    np.testing.assert_allclose(whole, [target.log_posterior(theta) for theta in thetas])


def test_tall_data_evaluate_fewer_draws(target, monkeypatch):
    monkeypatch.setattr(target, "n_data", 10**7)
    levels = chain_levels(target, np.repeat(target.mean[None, None], 4 * 100, 0).reshape(
        4, 100, -1))
    assert levels.shape == (4, LP_CHECK_MIN_DRAWS)


@pytest.mark.parametrize("n_evaluated", [LP_CHECK_MIN_DRAWS, 20])
def test_chains_in_one_mode_do_not_warn(n_evaluated):
    # Chi-square log posterior levels (as at a d-dimensional Gaussian posterior; skewed for
    # small d) of four chains in one mode: no warning in 3,000 fits (the check's false alarm
    # rate is below 1e-6 a fit; more than none would mean it is above 1e-3).
    rng = np.random.default_rng(2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        for d in (1, 2, 10, 600):
            for _ in range(750):
                check_chain_levels(-0.5 * rng.chisquare(d, size=(4, n_evaluated)), "fit", 2)


@pytest.mark.parametrize("n_evaluated, sigmas", [(LP_CHECK_MIN_DRAWS, 20.0), (20, 8.0)])
def test_a_chain_in_a_lower_mode_warns_naming_it(n_evaluated, sigmas):
    rng = np.random.default_rng(3)
    levels = -0.5 * rng.chisquare(10, size=(4, n_evaluated))
    gap_se = np.sqrt(2 * 5.0 / n_evaluated)  # chi-square variance 2d, halved twice
    levels[2] -= sigmas * gap_se
    with pytest.warns(ConvergenceWarning, match=r"different modes: chain 2 \(\d+\.\d nats\)"):
        found = check_chain_levels(levels, "fit", 2)
    np.testing.assert_allclose(found.mean, levels.mean(axis=1))
    assert found.gap_se == pytest.approx(gap_se, rel=0.5)


@pytest.mark.slow
@pytest.mark.parametrize("model_kind", ["logistic", "softmax", "student_t"])
def test_control_variate_estimates_match_the_exact_log_posterior(model_kind):
    # 100,000 rows: the remainder is estimated on 5,000 of them. At draws of the Laplace
    # approximation (where the chains sit) the estimate is within 0.05 nats of the exact log
    # posterior, whose spread over such draws is about sqrt(d / 2) nats.
    from skbayes_mh.models import StudentTModel
    from skbayes_mh.models._prior import GAUSSIAN, LOG_SCALE
    from skbayes_mh.models.softmax import CentredSoftmaxModel
    from skbayes_mh.sampling import control_variates

    rng = np.random.default_rng(4)
    X = rng.normal(size=(100_000, 3))
    eta = X @ [1.0, -1.0, 0.5]
    kind = None
    if model_kind == "logistic":
        model, scales = LogisticModel(), np.full(4, 2.0)
        y = (rng.random(100_000) < 1.0 / (1.0 + np.exp(-eta))).astype(float)
    elif model_kind == "softmax":
        model, scales = CentredSoftmaxModel(3), np.full(8, 2.0)
        y = rng.integers(0, 3, size=100_000).astype(float)
    else:
        model, scales, kind = StudentTModel(4.0), np.full(5, 10.0), GAUSSIAN | LOG_SCALE
        y = eta + 0.5 * rng.standard_t(4, size=100_000)
    target = linear_target(model, X, y, scales, kind=kind)
    target = linear_target(model, X, y, scales)
    cv, _ = control_variates(target)
    thetas = rng.multivariate_normal(target.mean, target.covariance, size=10)
    estimates = target.log_posterior_estimates(thetas, cv)
    exact = np.array([target.log_posterior(theta) for theta in thetas])
    assert np.max(np.abs(estimates - exact)) < 0.05, estimates - exact
    assert np.std(exact) > 0.5  # the levels vary far more than the error
    # Far from the centre (10 posterior sds) it is still close to the exact value.
    far = target.mean + 10 * np.sqrt(np.diag(target.covariance))
    far_estimate = target.log_posterior_estimates(far[None], cv)[0]
    assert abs(far_estimate - target.log_posterior(far)) < 0.05 * abs(
        target.log_posterior(far) - target.log_posterior(target.mean))
