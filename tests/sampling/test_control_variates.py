"""Control variates for the subsampling tests: each row's log-likelihood ratio read as a
residual against its second-order Taylor proxy around a centre, the proxies' full-data sum
exact.

What is checked: the proxies' sums (the linear models' BLAS pass against a user's per-row
functions); that a quadratic log-likelihood leaves zero residuals, so one minibatch decides
and the test is the exact test; acceptance probabilities against their formulas on
logistic regression at the posterior's scale; invariance from exact draws at temperature
1; and the errors a user gets when control variates cannot be used."""
import re
from pathlib import Path

import numpy as np
import pytest
from scipy.special import expit
from sklearn.base import clone

from skbayes_mh import acceptance_probability, sample
from skbayes_mh.acceptance import Austerity, ConfidenceSampler, Metropolis, MinibatchBarker
from skbayes_mh.models import LogisticModel
from skbayes_mh.sampling import control_variates
from skbayes_mh.sampling._api import _row_target

from _models import (linear_gaussian_gradient, linear_gaussian_hessian, linear_gaussian_loglik,
                     linear_target, logistic_gradient, logistic_hessian, logistic_loglik,
                     mh_chain, rate_tolerance, standard_normal_log_prior)
from _stats import Independent, Moments, assert_same_distribution

N_TRIALS = 4000


def logistic_rows(n_data, n_features, seed):
    """Logistic data as ``[x_i, 1, y_i]`` rows, and the weights that generated them."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_data, n_features))
    w = np.append(0.8 * rng.normal(size=n_features), -0.3)
    design = np.column_stack([X, np.ones(n_data)])
    y = (rng.random(n_data) < expit(design @ w)).astype(float)
    return X, y, np.column_stack([design, y])


def test_proxy_sums_agree_between_the_linear_pass_and_user_rows():
    X, y, rows = logistic_rows(3000, 3, seed=0)
    target = linear_target(LogisticModel(), X, y, np.ones(4))
    center = target.mean + 0.1
    linear_cv, _ = control_variates(target, center)
    theta = np.zeros(4)
    user_cv, _ = control_variates(
        _row_target(logistic_loglik, rows, theta, None, 1.0, logistic_gradient,
                    logistic_hessian), center)
    np.testing.assert_allclose(linear_cv[2], user_cv[2], rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(linear_cv[3], user_cv[3], rtol=1e-10, atol=1e-9)
    # At the MAP the log-likelihood's gradient sum balances the N(0, I) prior's, -theta:
    # the posterior gradient's Newton decrement g' C g (C the Laplace covariance) is the
    # squared distance to the optimum in posterior sd, below the search's 1e-4.
    at_map, _ = control_variates(target, target.mean)
    posterior_gradient = at_map[2] - target.mean
    assert posterior_gradient @ target.covariance @ posterior_gradient < 1e-4


@pytest.fixture(scope="module")
def gaussian_rows():
    rng = np.random.default_rng(1)
    x = np.column_stack([np.ones(5000), rng.normal(size=(5000, 2))])
    y = x @ np.array([0.3, -0.5, 1.0]) + rng.normal(size=5000)
    return np.column_stack([x, y])


def exact_delta(loglik, rows, theta, theta_prop):
    return sum(loglik(theta_prop, rows, i) - loglik(theta, rows, i) for i in range(len(rows)))


@pytest.mark.parametrize("test, accept", [
    (MinibatchBarker(batch_size=20), lambda delta: expit(delta)),
    (Austerity(batch_size=20), lambda delta: min(1.0, np.exp(delta)))],
    ids=["minibatch", "austerity"])
def test_a_quadratic_loglik_leaves_zero_residuals_and_the_exact_test(gaussian_rows, test,
                                                                      accept):
    # A linear-Gaussian log-likelihood equals its Taylor proxy about any centre: every
    # residual is 0 (to rounding), the first minibatch decides, and the decision is the
    # exact test's on the full-data ratio.
    theta = np.array([0.29, -0.49, 1.01])
    for shift in (0.01, -0.02, 0.03):
        theta_prop = theta + shift
        delta = exact_delta(linear_gaussian_loglik, gaussian_rows, theta, theta_prop)
        probability, rows_read = acceptance_probability(
            linear_gaussian_loglik, gaussian_rows, theta, theta_prop, acceptance=test,
            gradient=linear_gaussian_gradient, hessian=linear_gaussian_hessian,
            center=[0.0, 0.0, 0.0], n_trials=N_TRIALS, random_state=2)
        assert rows_read == 20
        expected = accept(delta)
        assert abs(probability - expected) < rate_tolerance(expected, N_TRIALS), (delta,
                                                                                  probability)


@pytest.fixture(scope="module")
def tall_logistic_problem():
    return make_tall_logistic_problem()


def make_tall_logistic_problem():
    """Logistic regression with 20,000 rows and 4 weights: per-row functions, the linear
    model's target (MAP and Laplace), and posterior-scale moves from near the MAP."""
    X, y, rows = logistic_rows(20_000, 3, seed=3)
    target = linear_target(LogisticModel(), X, y, np.ones(4))
    rng = np.random.default_rng(4)
    factor = np.linalg.cholesky(target.covariance)
    pairs = []
    for _ in range(4):
        theta = target.mean + factor @ rng.normal(size=4)
        pairs.append((theta, theta + factor @ rng.normal(size=4)))
    return rows, target, pairs


@pytest.mark.slow
@pytest.mark.parametrize("test, accept", [
    (MinibatchBarker(), lambda delta: expit(delta)),
    (Austerity(epsilon=0.05), lambda delta: min(1.0, np.exp(delta)))],
    ids=["minibatch", "austerity"])
def test_acceptance_probability_at_the_posterior_scale(tall_logistic_problem, test, accept):
    # Moves of one posterior sd from states one sd from the MAP, at temperature 1: without
    # control variates these tests read most of the 20,000 rows; with them, the residuals'
    # spread is third order in the distance and the first minibatch decides, at the exact
    # test's acceptance probability (its error is then far below the trials' binomial
    # error).
    rows, target, pairs = tall_logistic_problem
    for theta, theta_prop in pairs:
        delta = exact_delta(logistic_loglik, rows, theta, theta_prop)
        probability, rows_read = acceptance_probability(
            logistic_loglik, rows, theta, theta_prop, acceptance=test,
            gradient=logistic_gradient, hessian=logistic_hessian, center=target.mean,
            n_trials=N_TRIALS, random_state=5)
        assert rows_read <= test.batch_size * 1.05
        expected = accept(delta)
        assert abs(probability - expected) < rate_tolerance(expected, N_TRIALS), (delta,
                                                                                  probability)
        without, rows_without = acceptance_probability(
            logistic_loglik, rows, theta, theta_prop,
            acceptance=clone(test).set_params(control_variates=False), n_trials=200,
            random_state=5)
        assert rows_without > 5 * rows_read


#: Chains of the invariance tests (each started at an exact draw): as many as a test needs
#: to see a 0.1 sd shift or a 10% sd error (assert_same_distribution checks it). Random-walk
#: steps and the minibatch test's paths (Barker's acceptance, at most one half) move slowly;
#: the exact test's and Austerity's Hamiltonian paths need fewer chains (and the exact
#: test's full-data gradients make each chain dear).
N_CHAINS = 2000
N_FAST_CHAINS = 600
N_STEPS = 30
#: The invariance tests compare the states after this many steps of each chain (the first
#: steps stay near their exact starts, so that a kernel's bias shows there only in part).
KEPT_FROM = 10
N_REFERENCE = 16_000


def importance_reference(rows, target, n_draws, n_starts, seed=11):
    """The exact posterior of ``rows`` (``[x_i, 1, y_i]``, N(0, I) prior) by importance
    sampling from ``target``'s Laplace approximation (``n_draws`` draws; with 20,000 rows
    and 4 weights the weights' ESS is above 99% of them): its moments with their Monte Carlo
    errors (self-normalised importance sampling, by the delta method), ``n_starts`` exact
    starts resampled by the weights, and the weights' effective size."""
    rng = np.random.default_rng(seed)
    d = target.mean.shape[0]
    z = rng.standard_normal((n_draws, d))
    draws = target.mean + z @ np.linalg.cholesky(target.covariance).T
    design, y = rows[:, :d], rows[:, d]
    loglik = np.concatenate([
        (y @ eta) - np.logaddexp(0.0, eta).sum(axis=0)
        for eta in (design @ draws[start:start + 500].T for start in range(0, n_draws, 500))])
    log_weights = loglik - 0.5 * np.sum(draws**2, axis=1) + 0.5 * np.sum(z**2, axis=1)
    weights = np.exp(log_weights - log_weights.max())
    weights /= weights.sum()
    mean = weights @ draws
    deviations = draws - mean
    variance = weights @ deviations**2
    mean_error = np.sqrt(weights**2 @ deviations**2)
    sd_error = np.sqrt(weights**2 @ (deviations**2 - variance) ** 2) / (2 * np.sqrt(variance))
    starts = draws[rng.choice(n_draws, n_starts, p=weights)]
    return (Moments(mean, np.sqrt(variance), mean_error, sd_error), starts,
            1.0 / np.sum(weights**2))


#: :func:`importance_reference` of :func:`make_tall_logistic_problem` with
#: :data:`N_REFERENCE` draws and :data:`N_CHAINS` starts, stored by
#: ``benchmarks/paper/family_references.py --families control_variates`` (computed here it
#: cost 7 to 9 s of a test worker at every run).
REFERENCE = Path(__file__).with_name("data") / "control_variates_reference.npz"


@pytest.fixture(scope="module")
def exact_reference(tall_logistic_problem):
    """The stored :func:`importance_reference` (its data checked against these rows)."""
    rows, _, _ = tall_logistic_problem
    with np.load(REFERENCE) as saved:
        np.testing.assert_allclose(saved["row_sums"], rows.sum(axis=0), rtol=1e-12,
                                   err_msg="the stored reference is of other rows: rebuild it")
        assert saved["effective"] > 0.9 * saved["n_draws"]
        return (Moments(saved["mean"], saved["sd"], saved["mean_error"], saved["sd_error"]),
                saved["starts"])


@pytest.mark.parametrize("test, most_rows", [
    (MinibatchBarker(), 1.05 * 100), (Austerity(), 1.05 * 500),
    # Its range bound is worst-case (a third-derivative bound over the largest row): it
    # needs more rows than the others, still a few percent of N (3.5% with this seed).
    (ConfidenceSampler(), 0.1 * 20_000)], ids=["minibatch", "austerity", "confidence"])
@pytest.mark.slow
def test_posterior_moments_hold_from_exact_draws(tall_logistic_problem, exact_reference,
                                                 test, most_rows):
    # Chains started at exact posterior draws take N_STEPS random-walk steps of posterior
    # scale with control variates; their states after KEPT_FROM steps (independent chains:
    # groups of correlated draws) must keep the exact posterior's means and sds, within
    # both sides' Monte Carlo error, in a test that sees a 0.1 sd shift or a 10% sd error.
    _, target, _ = tall_logistic_problem
    reference, starts = exact_reference
    trajectories, reads = [], []
    for k, start in enumerate(starts):
        out = mh_chain(target, start, 100 + k, 0, N_STEPS, acceptance=test,
                       control_variates=True, scale=1.0)
        trajectories.append(out.draws[KEPT_FROM:])
        reads.append(out.stats["n_data_read"].mean())
    trajectories = np.array(trajectories)
    assert np.mean(reads) <= most_rows
    assert_same_distribution(Independent(trajectories), reference, label=test.name)
    # The chains moved: most are more than a tenth of a posterior sd from their start.
    assert np.mean(np.abs(trajectories[:, -1] - starts) > 0.1 * reference.sd) > 0.8


@pytest.mark.parametrize("test, control_variates, n_chains", [
    ("metropolis", False, N_FAST_CHAINS), (MinibatchBarker(), True, N_CHAINS),
    (Austerity(), True, N_FAST_CHAINS)], ids=["metropolis", "minibatch", "austerity"])
@pytest.mark.slow
def test_hamiltonian_paths_keep_the_posterior_from_exact_draws(tall_logistic_problem,
                                                               exact_reference, test,
                                                               control_variates, n_chains):
    # Hamiltonian paths (full-data gradient for the exact test, the control variates' proxy
    # for the subsampling tests) from exact draws: the states after the first step keep the
    # exact posterior's moments (as above).
    _, target, _ = tall_logistic_problem
    reference, starts = exact_reference
    starts = starts[:n_chains]
    trajectories, accepted = [], []
    for k, start in enumerate(starts):
        out = mh_chain(target, start, 700 + k, 0, 10, proposal="hmc", acceptance=test,
                       control_variates=control_variates)
        trajectories.append(out.draws[1:])
        accepted.append(out.stats["acceptance_rate"].mean())
    trajectories = np.array(trajectories)
    assert_same_distribution(Independent(trajectories), reference, label=str(test))
    assert np.mean(accepted) > 0.3
    assert np.mean(np.abs(trajectories[:, -1] - starts) > 0.5 * reference.sd) > 0.5


def test_sample_with_derivatives_uses_control_variates_and_agrees():
    # sample() with the rows' gradient and Hessian: the MAP by Newton, then the minibatch
    # test reads ~batch_size rows and the posterior agrees with the exact test's.
    X, y, rows = logistic_rows(20_000, 2, seed=6)
    theta0 = np.zeros(3)
    kwargs = dict(log_prior=standard_normal_log_prior, n_draws=6000, n_warmup=500,
                  random_state=7)
    target = linear_target(LogisticModel(), X, y, np.ones(3))
    step = 0.8 * np.sqrt(np.diag(target.covariance))
    with_cv = sample(logistic_loglik, rows, theta0, step_size=step, gradient=logistic_gradient,
                     hessian=logistic_hessian, acceptance="minibatch", **kwargs)
    assert with_cv.mean_data_read < 150
    exact = sample(logistic_loglik, rows, target.mean, step_size=step, acceptance="metropolis",
                   **kwargs)
    sd = np.sqrt(np.diag(target.covariance))
    # Random-walk chains in 3-D: ESS about 1/10 of the draws; 5 combined standard errors.
    assert np.all(np.abs(with_cv.draws.mean(axis=0) - exact.draws.mean(axis=0))
                  < 5 * sd * np.sqrt(2 * 10 / 6000))
    # The sd's relative error: sqrt(1 / (2 ESS)) each; five of the pair's.
    assert np.all(np.abs(with_cv.draws.std(axis=0) / exact.draws.std(axis=0) - 1)
                  < 5 * np.sqrt(2 * 10 / (2 * 6000)))


def test_pcn_in_sample_moves_around_the_laplace_approximation():
    X, y, rows = logistic_rows(5000, 2, seed=8)
    result = sample(logistic_loglik, rows, np.zeros(3), step_size=1.0,
                    gradient=logistic_gradient, hessian=logistic_hessian,
                    log_prior=standard_normal_log_prior, acceptance="metropolis",
                    proposal="pcn", n_draws=2000, random_state=9)
    target = linear_target(LogisticModel(), X, y, np.ones(3))
    # An independence proposal from a near-exact Laplace approximation: nearly all accepted.
    assert result.acceptance_rate > 0.8
    sd = np.sqrt(np.diag(target.covariance))
    assert np.all(np.abs(result.draws.mean(axis=0) - target.mean) < 5 * sd / np.sqrt(1000))


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(acceptance=MinibatchBarker(control_variates=True)), ValueError,
     "needs each row's gradient and Hessian"),
    (dict(acceptance="metropolis", proposal="pcn"), ValueError, "Laplace approximation"),
    (dict(hessian=logistic_hessian), ValueError, "hessian was given without gradient"),
    (dict(gradient=logistic_loglik, hessian=logistic_hessian), TypeError,
     "gradient(theta, data, i, out)"),
    (dict(gradient=lambda theta, data, i, out: None, hessian=logistic_hessian), TypeError,
     "numba.njit"),
    (dict(acceptance=MinibatchBarker(control_variates="yes")), ValueError, "control_variates"),
])
def test_bad_control_variate_input_is_explained(kwargs, error, message):
    _, _, rows = logistic_rows(200, 1, seed=10)
    kwargs = dict(dict(step_size=0.1, n_draws=10), **kwargs)
    with pytest.raises(error, match=re.escape(message)):
        sample(logistic_loglik, rows, np.zeros(2), **kwargs)


def test_confidence_sampler_needs_a_range_bound_for_control_variates():
    _, _, rows = logistic_rows(200, 1, seed=11)
    with pytest.raises(ValueError, match="third derivative"):
        sample(logistic_loglik, rows, np.zeros(2), step_size=0.1, n_draws=10,
               gradient=logistic_gradient, hessian=logistic_hessian,
               acceptance=ConfidenceSampler(lipschitz=2.0, control_variates=True))
    # "auto" falls back to the Lipschitz range without them.
    result = sample(logistic_loglik, rows, np.zeros(2), step_size=0.1, n_draws=10,
                    gradient=logistic_gradient, hessian=logistic_hessian,
                    acceptance=ConfidenceSampler(lipschitz=2.0))
    assert result.draws.shape == (10, 2)


def test_full_data_tests_never_use_control_variates(tall_logistic_problem):
    _, target, _ = tall_logistic_problem
    assert not Metropolis().uses_control_variates(target)
    assert MinibatchBarker().uses_control_variates(target)
    assert not MinibatchBarker(control_variates=False).uses_control_variates(target)
