"""Models (per-datum log-likelihoods and priors, module level and cached), data makers,
settings and helpers that the tests share."""
import contextlib
import functools
import math
import os
import signal
import sys
import threading
import time
import warnings
from pathlib import Path

import numba
import numpy as np
import pytest
from skbayes_mh.models import LogisticModel
from _user_models import (logistic_gradient, logistic_hessian, logistic_lipschitz,  # noqa: F401
                          logistic_loglik)  # benchmarks/, see conftest

#: Short chains for tests of the API (shapes, errors, scikit-learn's checks), not of the posterior.
FAST = dict(n_draws=60, n_warmup=60, n_chains=2)


def quiet_fit(estimator, X, y):
    """``estimator.fit(X, y)`` with warnings silenced (short chains warn of convergence)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return estimator.fit(X, y)


@numba.njit(cache=True)
def gaussian_mean_loglik(theta, data, i):
    """x_i ~ N(theta_0, 1), up to a constant."""
    return -0.5 * (data[i, 0] - theta[0]) ** 2


@numba.njit(cache=True)
def linear_loglik(theta, data, i):
    """``theta_0 * x_i``: with theta = 0 and theta' = 1 the per-datum log ratios are x_i."""
    return theta[0] * data[i, 0]


@numba.njit(cache=True)
def mixture_loglik(theta, data, i):
    """x_i ~ 0.5 N(theta_1, 2) + 0.5 N(theta_1 + theta_2, 2) (variances 2), up to a constant."""
    x = data[i, 0]
    a = -0.25 * (x - theta[0]) ** 2
    b = -0.25 * (x - theta[0] - theta[1]) ** 2
    top = max(a, b)
    return top + math.log(0.5 * math.exp(a - top) + 0.5 * math.exp(b - top))


@numba.njit(cache=True)
def mixture_log_prior(theta):
    """theta ~ N(0, diag(10, 1))."""
    return -0.5 * (theta[0] ** 2 / 10.0 + theta[1] ** 2)


@numba.njit(cache=True)
def linear_gaussian_loglik(theta, data, i):
    """y_i ~ N(x_i . theta, 1) with row i = [x_i, y_i]."""
    residual = data[i, data.shape[1] - 1]
    for k in range(theta.shape[0]):
        residual -= data[i, k] * theta[k]
    return -0.5 * residual * residual


@numba.njit(cache=True)
def standard_normal_log_prior(theta):
    return -0.5 * np.sum(theta * theta)


@numba.njit(cache=True)
def nan_beyond_one_loglik(theta, data, i):
    """Gaussian mean model that returns NaN once theta_0 > 1."""
    if theta[0] > 1.0:
        return math.nan
    return -0.5 * (data[i, 0] - theta[0]) ** 2


@numba.njit(cache=True)
def zero_beyond_one_loglik(theta, data, i):
    """Gaussian mean model truncated to theta_0 <= 1 (log-likelihood -inf beyond)."""
    if theta[0] > 1.0:
        return -math.inf
    return -0.5 * (data[i, 0] - theta[0]) ** 2


@numba.njit(cache=True)
def positive_log_prior(theta):
    """Flat on theta_0 > 0."""
    return 0.0 if theta[0] > 0.0 else -math.inf


@numba.njit(cache=True)
def integer_loglik(theta, data, i):
    return 1


def batch_means_standard_error(draws, n_batches=40):
    """Monte Carlo standard error of the mean of each column of a correlated chain
    (non-overlapping batch means)."""
    draws = np.asarray(draws, dtype=float)
    usable = (draws.shape[0] // n_batches) * n_batches
    means = draws[:usable].reshape(n_batches, -1, *draws.shape[1:]).mean(axis=1)
    return means.std(axis=0, ddof=1) / np.sqrt(n_batches)


def per_datum_ratios(delta, spread, n=1000, shape="normal", seed=0):
    """(n, 1) data for ``linear_loglik`` with theta = 0, theta' = 1: per-datum log ratios
    ``delta / n + spread * z_i`` (``z`` standardised: exactly mean 0, sd 1), so the full-data
    log ratio is exactly ``delta``."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=n) if shape == "normal" else rng.exponential(size=n)
    return (delta / n + spread * (z - z.mean()) / z.std())[:, None]


def rate_tolerance(p, n_trials):
    """Four standard errors of a rate ``p`` estimated from ``n_trials`` Bernoulli trials
    (at least those of a rate 1 / n_trials, so a p of 0 or 1 is not given zero tolerance)."""
    return 4.0 * np.sqrt(max(p * (1 - p), 1.0 / n_trials) / n_trials)


def linear_target(model, X, y, scales, intercept=True, inv_temperature=1.0, kind=None,
                  locations=None, full=True, weights=None):
    """A linear-model Target with its Laplace approximation (for tests of the samplers);
    ``weights``: the rows' sample weights (None: none)."""
    from skbayes_mh._validation import read_only
    from skbayes_mh.models import LinearData
    from skbayes_mh.models._prior import GAUSSIAN, BuiltinPrior
    from skbayes_mh.sampling import Target

    X = read_only(np.ascontiguousarray(X, dtype=np.float64))
    y = read_only(np.ascontiguousarray(y, dtype=np.float64))
    weights = np.zeros(0) if weights is None else np.asarray(weights, dtype=np.float64)
    data = LinearData(X, y, read_only(weights), intercept)
    prior = BuiltinPrior(GAUSSIAN if kind is None else kind, scales, locations,
                         n_outputs=model.n_outputs, block=data.block, intercept=intercept)
    return Target.linear(model, data, prior, inv_temperature, full, lipschitz=True)


def firefly_chain(target, theta0, seed, n_warmup, n_draws, proposal="mala", bound="map",
                  resample="implicit", q_db=None, step_size="auto", tune=True, **firefly):
    """One Firefly chain on ``target``, the proposal shaped by its Laplace covariance."""
    from skbayes_mh.acceptance import Firefly
    from skbayes_mh.proposals import resolve_proposal
    from skbayes_mh.sampling import FireflySampler, QdbTuner, ScaleTuner, Shape, run_chain

    firefly = Firefly(bound=bound, resample=resample, q_db=q_db, **firefly).validate()
    proposal = resolve_proposal(proposal)
    shape = Shape.from_covariance(target.covariance)
    scale = proposal.initial_scale(target.n_params) if step_size == "auto" else step_size
    fireflies = target.model.firefly_bound(target.data, target.mean, bound,
                                           target.inv_temperature)
    sampler = FireflySampler(target, firefly, proposal, shape, scale, fireflies)
    tuners = []
    if tune and step_size == "auto":
        tuners.append(ScaleTuner())
    if tune and q_db is None:
        tuners.append(QdbTuner())
    return run_chain(sampler, theta0, seed, n_warmup, n_draws, tuners=tuners)


def mh_chain(target, theta0, seed, n_warmup, n_draws, proposal="random_walk",
             acceptance="metropolis", control_variates=False, scale=None):
    """One Metropolis-Hastings chain on ``target``, the proposal shaped by its Laplace
    covariance; its scale tuned in warm-up unless given. With ``control_variates``, the
    test reads residuals against the rows' Taylor proxies at the MAP (the confidence
    sampler's range bound whitened by the Laplace covariance)."""
    from skbayes_mh.acceptance import resolve_acceptance
    from skbayes_mh.proposals import resolve_proposal
    from skbayes_mh.sampling import MetropolisHastings, ScaleTuner, Shape, run_chain
    from skbayes_mh.sampling import control_variates as build_control_variates

    proposal = resolve_proposal(proposal)
    acceptance = resolve_acceptance(acceptance)
    cv = None
    if control_variates:
        cv, _ = build_control_variates(
            target, whitening_covariance=target.covariance if acceptance.name == "confidence"
            else None)
    sampler = MetropolisHastings(target, acceptance, proposal,
                                 Shape.from_covariance(target.covariance),
                                 proposal.initial_scale(target.n_params) if scale is None
                                 else scale, cv)
    return run_chain(sampler, theta0, seed, n_warmup, n_draws,
                     tuners=[ScaleTuner()] if scale is None else [])


@numba.njit(cache=True)
def linear_gaussian_gradient(theta, data, i, out):
    """Gradient of :func:`linear_gaussian_loglik` for row ``i``: ``r_i x_i``."""
    residual = data[i, data.shape[1] - 1]
    for k in range(theta.shape[0]):
        residual -= data[i, k] * theta[k]
    for k in range(theta.shape[0]):
        out[k] = residual * data[i, k]


@numba.njit(cache=True)
def linear_gaussian_hessian(theta, data, i, out):
    """Hessian of :func:`linear_gaussian_loglik` for row ``i``: ``-x_i x_i'``."""
    for a in range(theta.shape[0]):
        for b in range(theta.shape[0]):
            out[a, b] = -data[i, a] * data[i, b]


#: scikit-learn's checks that a sampler fails by design, and why (``expected_failed_checks``;
#: ``estimators/test_sklearn_checks.py`` decides from an estimator's settings which apply).
#: The weight-equivalence checks fit 15 rows of 30 features with integer weights (7 of them
#: 0) and, apart, the 27 rows they repeat, and want the same predictions to 1e-7.
WEIGHT_EQUIVALENCE_CHECKS = ("check_sample_weight_equivalence_on_dense_data",
                             "check_sample_weight_equivalence_on_sparse_data")
WEIGHTS_AS_REPEATS = (
    "integer weights and repeated rows give the same posterior (tested statistically in "
    "test_sample_weight.py), but not the same draws: ")
#: What makes the draws differ there, by cause (each measured: without it the draws agree).
DRAWS_DIFFER_BECAUSE = {
    "random_rows": (
        "the acceptance test reads random subsets of the rows (minibatches, or Firefly's "
        "bright points), other ones from 27 repeated rows than from 15 weighted ones"),
    "rows_span": (
        "with more features than rows and a Gaussian prior the chains sample the rows' span "
        "in a basis computed from the rows (the rows of weight 0 enlarge it, rank 14 "
        "against 8, and repeated rows turn it): an exact reduction whose draws depend on "
        "the basis"),
    "laplace_map": (
        "the chains start from and are shaped at a MAP that L-BFGS (a Laplace prior is not "
        "differentiable at 0) finds within its tolerance, along another path for weighted "
        "and repeated rows"),
    "count_start": (
        "a count or Gamma model's MAP search starts at the log of the mean outcome, which "
        "it takes without the weights, and stops within its tolerance at another point"),
}
#: ... and those whose data a linear model fits exactly, where Student-t regression's noise
#: scale, when sampled (``scale=None``), has an improper posterior and fit refuses.
EXACT_FIT_CHECKS = ("check_regressors_no_decision_function", "check_sample_weights_shape",
                    "check_sample_weights_not_overwritten")
EXACT_FIT = ("it fits y that a linear function of X fits exactly: the posterior of the noise "
             "scale is improper there, and fit refuses it with a ValueError")
TOO_FEW_ROWS = ("its 27 rows (15 weighted) are fewer than the 31 coefficients, so a linear "
                "function fits them exactly: the posterior of a sampled noise scale or "
                "Gamma dispersion is then a funnel toward 0 with no mode, and fit refuses "
                "both with a ValueError")


UNORDERED_BLOBS = ("its three classes are blobs around centres in no order along any "
                   "direction (accuracy 0.69 against the 0.83 asked): an ordinal model, one "
                   "linear predictor cut into ordered classes, cannot separate them")


def target_kind(estimator_class):
    """What ``y`` an estimator class fits, from its scikit-learn tags and its family:
    ``"classification"``, ``"counts"`` (non-negative counts), ``"positive"`` (positive real
    values), ``"proportions"`` (in [0, 1], weighted by their trials) or ``"regression"``; so that a test can run over every registered estimator
    (``skbayes_mh.linear_model.ESTIMATORS``)."""
    from sklearn.base import is_classifier
    from sklearn.utils import get_tags

    estimator = estimator_class()
    if is_classifier(estimator):
        return "classification"
    if estimator._family().outcome == "proportions":
        return "proportions"
    if not get_tags(estimator).target_tags.positive_only:
        return "regression"
    return "counts" if estimator._family().outcome == "counts" else "positive"


def long_metropolis_fit(estimator_class, X, y):
    """The draws (``_theta_draws()``) of a long exact fit: a reference for the estimator's model."""
    return estimator_class(acceptance="metropolis", n_draws=40_000, n_warmup=2000, thin=5,
                           n_chains=2, random_state=1).fit(X, y)._theta_draws()


def long_metropolis_chain(loglik, log_prior, data, start, step_size, n_draws):
    """Every tenth draw of a long random-walk Metropolis chain: a reference for a user's model."""
    from skbayes_mh import sample

    return sample(loglik, data, start, step_size=step_size, log_prior=log_prior,
                  acceptance="metropolis", n_draws=n_draws, n_warmup=5000,
                  random_state=1).draws[::10]


#: The stored summaries of long reference chains (``benchmarks/paper/family_references.py``).
REFERENCES = Path(__file__).resolve().parent / "estimators" / "data"


def stored_reference(name, X, y):
    """The summary of ``tests/estimators/test_{name}.py``'s long reference chain of its
    independently written model (``benchmarks/paper/family_references.py``), as
    :class:`_stats.Moments` with its Monte Carlo errors; the stored data must be ``X, y``
    (else the reference is stale: rebuild it with that script)."""
    from _stats import Moments

    with np.load(REFERENCES / f"{name}_reference.npz") as saved:
        for given, stored in ((X, saved["X"]), (y, saved["y"])):
            np.testing.assert_allclose(given, stored, rtol=1e-12, atol=0,
                                       err_msg=f"{name}'s data differ from its stored reference")
        return Moments(saved["mean"], saved["sd"], saved["mean_error"], saved["sd_error"])


def min_ess(estimator):
    """A fitted estimator's smallest bulk effective sample size over every parameter."""
    return min(float(np.min(v)) for v in estimator.diagnostics_["ess_bulk"].values())


def firefly_row_terms(target, bound, theta, inv_temperature=1.0):
    """Every row's ``(l_i, b_i)`` (log-likelihood, Firefly bound) at ``theta``, from the kernel."""
    from skbayes_mh._kernels.firefly import firefly_terms

    values = np.empty((target.n_data, 2))
    firefly_terms(target.firefly_model, tuple(bound), np.asarray(theta, dtype=float),
                  inv_temperature, values)
    return values


def jaakkola_jordan_lambdas(xi):
    """``jaakkola_jordan_lambda`` (the Jaakkola-Jordan bound's curvature) at each of ``xi``."""
    from skbayes_mh.models.logistic import jaakkola_jordan_lambda

    return np.vectorize(jaakkola_jordan_lambda)(np.asarray(xi, dtype=float))


def logistic_grid_posterior(x, y, n_points):
    """The posterior of a logistic regression with a slope and an intercept under N(0, I)
    priors, on an ``n_points`` x ``n_points`` grid spanning 7 Laplace sds each way: a dict
    with ``design`` ``[x, 1]``, ``target`` (with its MAP ``theta_map`` and Laplace
    ``covariance``), the ``grid`` and its normalised ``weights``, and the grid posterior's
    ``mean``, ``sd``, ``grid_covariance`` and cell ``spacing``."""
    n_data = x.shape[0]
    design = np.column_stack([x, np.ones(n_data)])
    target = linear_target(LogisticModel(), x[:, None], y, np.ones(2))
    theta_map, covariance = target.mean, target.covariance
    half_width = 7.0 * np.sqrt(np.diag(covariance))
    axes = [np.linspace(m - h, m + h, n_points) for m, h in zip(theta_map, half_width)]
    grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 2)
    log_post = -0.5 * (grid**2).sum(axis=1)
    for rows in np.array_split(np.arange(n_data), max(1, n_data // 200)):
        z = grid @ design[rows].T
        log_post -= np.logaddexp(0.0, -(2.0 * y[rows] - 1.0) * z).sum(axis=1)
    weights = np.exp(log_post - log_post.max())
    weights /= weights.sum()
    mean = weights @ grid
    centred = grid - mean
    return dict(design=design, y=y, target=target, theta_map=theta_map, covariance=covariance,
                grid=grid, weights=weights, mean=mean, sd=np.sqrt(weights @ centred**2),
                grid_covariance=centred.T @ (centred * weights[:, None]),
                spacing=np.array([a[1] - a[0] for a in axes]))



def slope_intercept_problem():
    """600 rows of one standard-normal feature and a logistic label (slope 0.8, intercept
    -0.5), and its posterior under N(0, 2^2) on the slope and N(0, 10^2) on the intercept
    (an estimator's ``prior_scale=2.0`` and default intercept prior), integrated on a
    361 x 361 grid: ``(x, y, mean, sd)`` with ``mean`` and ``sd`` of (slope, intercept)."""
    return tuple(np.copy(value) for value in _slope_intercept_grid())


@functools.lru_cache(maxsize=None)
def _slope_intercept_grid():
    """:func:`slope_intercept_problem`'s values, computed once per process, one slope of
    the grid at a time (all 361 x 361 x 600 log-likelihoods at once made 0.6 GB arrays and
    took 10 s)."""
    from scipy.special import expit, log_expit

    rng = np.random.default_rng(3)
    x = rng.normal(size=600)
    y = (rng.random(600) < expit(0.8 * x - 0.5)).astype(int)
    slopes, intercepts = np.linspace(0.0, 1.8, 361), np.linspace(-1.4, 0.4, 361)
    sign = np.where(y == 1, 1.0, -1.0)  # log p(y | z) = log_expit(sign * z)
    log_post = np.empty((slopes.size, intercepts.size))
    for k, slope in enumerate(slopes):
        log_post[k] = log_expit(sign * (slope * x + intercepts[:, None])).sum(axis=1)
    w, b = np.meshgrid(slopes, intercepts, indexing="ij")
    log_post += -0.5 * w**2 / 2.0**2 - 0.5 * b**2 / 10.0**2
    density = np.exp(log_post - log_post.max())
    density /= density.sum()
    mean = np.array([(density * w).sum(), (density * b).sum()])
    sd = np.sqrt(np.array([(density * w**2).sum(), (density * b**2).sum()]) - mean**2)
    return x, y, mean, sd


@contextlib.contextmanager
def interrupt_after(seconds):
    """Send this process SIGINT (Ctrl-C) after ``seconds`` unless the block has ended by
    then (so that no signal outlives its test); yields ``{"at": time it was sent}``."""
    sent, done = {}, threading.Event()

    def fire():
        if not done.wait(seconds):
            sent["at"] = time.perf_counter()
            os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Thread(target=fire, daemon=True)
    timer.start()
    try:
        yield sent
    finally:
        done.set()
        timer.join()


def timed(call):
    """Seconds ``call()`` takes."""
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


needs_main_thread = pytest.mark.skipif(
    threading.current_thread() is not threading.main_thread() or sys.platform == "win32",
    reason="Ctrl-C is delivered to the main thread, where the handler is installed")


def interrupted_fit(settings, X, y, within):
    """A ``MinibatchMHLogisticRegression(**settings)`` fit asked for 10^6 draws and sent
    Ctrl-C at three times a 5-draw fit's time (at least 2 s: well after the warm-up,
    however loaded the machine), checked to have returned within ``within`` seconds of the
    signal, interrupted, with its warning; the fitted estimator."""
    from skbayes_mh import MinibatchMHLogisticRegression

    warmup = timed(lambda: quiet_fit(
        MinibatchMHLogisticRegression(**{**settings, "n_draws": 5}), X, y))
    clf = MinibatchMHLogisticRegression(**{**settings, "n_draws": 10**6})
    with interrupt_after(max(2.0, 3 * warmup)) as sent, \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf.fit(X, y)
    assert "at" in sent, "fit returned before Ctrl-C was sent"
    waited = time.perf_counter() - sent["at"]
    assert waited < within, f"fit returned {waited:.2f} s after Ctrl-C"
    assert clf.interrupted_
    assert any("was interrupted: it keeps the first" in str(w.message) for w in caught)
    return clf
